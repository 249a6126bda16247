-- cqs_visible_product_status (0018) in two statements, one for an admin viewer and one for any other, same
-- results (issue 16). As one statement, `p_viewer_is_admin OR EXISTS (…)` made its plan with the flag's value
-- cheaper than the plan for any value, so PL/pgSQL planned it again on every call: every create, and every
-- start that names a product, paid a planning. auto_explain of the eighth create in a session showed that statement
-- alone with its arguments written in, every other statement of cqs_create_call with a cached plan; 20,000
-- calls of the function for an admin took 341 ms against 67 ms split. pgbench of cqs_create_call, one client,
-- three interleaved pairs of 12 s: 1,790-1,872 creates a second split against 1,711-1,823 (2.7 % more).
CREATE OR REPLACE FUNCTION cqs_visible_product_status(p_company_id uuid, p_viewer_id uuid,
    p_viewer_is_admin boolean, p_product_id bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF p_viewer_is_admin THEN
    RETURN (SELECT p.status FROM products p WHERE p.company_id = p_company_id AND p.id = p_product_id);
  END IF;
  RETURN (SELECT p.status FROM products p
    WHERE p.company_id = p_company_id AND p.id = p_product_id
      AND EXISTS (SELECT 1 FROM product_grants g
        WHERE g.company_id = p.company_id AND g.product_id = p.id AND g.user_id = p_viewer_id));
END;
$$;

-- The three SQL functions of 0006 and 0013 become PL/pgSQL, same results (issue 16). A SQL function that
-- cannot be inlined (each of these reads a table or has a sub-SELECT) is parsed and planned again at every
-- call, since its plans live only as long as the calling statement; PL/pgSQL keeps its plans for the
-- session. The metadata check runs on every insert or update of a call or a handoff record, and the agent and
-- product look-ups in every call write: pgbench of cqs_create_call used 1,000-1,250 µs of CPU instead of
-- 1,420-1,810 (30 % less), and the empty metadata of a new call is counted without a query.
CREATE OR REPLACE FUNCTION cqs_jsonb_top_level_keys(j jsonb) RETURNS integer
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF jsonb_typeof(j) IS DISTINCT FROM 'object' OR j = '{}'::jsonb THEN
    RETURN 0;
  END IF;
  RETURN (SELECT count(*)::integer FROM jsonb_object_keys(j));
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cqs_call_agent(p_company_id uuid, p_agent_email text, OUT ids uuid[], OUT email text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  SELECT array_agg(u.id ORDER BY u.created_at, u.id), (array_agg(u.email ORDER BY u.created_at, u.id))[1]
    INTO ids, email
    FROM users u
    WHERE u.company_id = p_company_id AND lower(u.email) = lower(p_agent_email) AND u.active;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cqs_visible_product_status(p_company_id uuid, p_viewer_id uuid,
    p_viewer_is_admin boolean, p_product_id bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT p.status FROM products p
    WHERE p.company_id = p_company_id AND p.id = p_product_id
      AND (p_viewer_is_admin OR EXISTS (SELECT 1 FROM product_grants g
        WHERE g.company_id = p.company_id AND g.product_id = p.id AND g.user_id = p_viewer_id)));
END;
$$;

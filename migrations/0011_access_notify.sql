-- Every process caches key -> principal in memory (src/domain/access/principal-cache.ts), so a change to
-- what a key may do must reach every process: a statement trigger on each table authentication or product
-- access reads NOTIFYs the notifier's channel with the key "*access" at commit (once per transaction
-- however many rows). Inserting a key or a user needs no notice: an unknown key is never cached.
CREATE OR REPLACE FUNCTION access_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('call_handoff_changed', '*access');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER api_keys_access_notify AFTER UPDATE OR DELETE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER users_access_notify AFTER UPDATE OR DELETE ON "users"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER product_grants_access_notify AFTER INSERT OR UPDATE OR DELETE ON "product_grants"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER products_access_notify AFTER UPDATE OR DELETE ON "products"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER companies_access_notify AFTER DELETE ON "companies"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();

-- Every process now also caches the products each user sees (src/domain/access/principal-cache.ts), so a
-- product added by another process (the CLI, a second server) must reach them too: an admin's list grows.
DROP TRIGGER products_access_notify ON "products";
--> statement-breakpoint
CREATE TRIGGER products_access_notify AFTER INSERT OR UPDATE OR DELETE ON "products"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();

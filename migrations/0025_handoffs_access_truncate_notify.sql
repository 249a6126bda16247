-- TRUNCATE fires no row trigger and no UPDATE or DELETE statement trigger, so an operator's TRUNCATE of a
-- table that authentication reads (0011, 0015), or of call_handoffs (0010), told no process: every cache
-- kept what was gone (a deleted key worked for up to the principal cache's 60 s; a final handoff record
-- was served until evicted). A TRUNCATE now notifies as the deletes do; one of call_handoffs (also reached
-- by TRUNCATE ... CASCADE of conversations or companies) notifies "*handoffs-truncated", which empties
-- every process's handoff caches (src/domain/handoffs/final-cache.ts).
CREATE TRIGGER api_keys_access_notify_truncate AFTER TRUNCATE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER users_access_notify_truncate AFTER TRUNCATE ON "users"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER product_grants_access_notify_truncate AFTER TRUNCATE ON "product_grants"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER products_access_notify_truncate AFTER TRUNCATE ON "products"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE TRIGGER companies_access_notify_truncate AFTER TRUNCATE ON "companies"
  FOR EACH STATEMENT EXECUTE FUNCTION access_notify();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION call_handoffs_truncate_notify() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('call_handoff_changed', '*handoffs-truncated');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER call_handoffs_truncate_notify AFTER TRUNCATE ON "call_handoffs"
  FOR EACH STATEMENT EXECUTE FUNCTION call_handoffs_truncate_notify();

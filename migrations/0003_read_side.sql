ALTER TABLE "companies" ADD COLUMN "retention_days" integer;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "latest_upload_id" bigint;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "latest_upload_status" text;--> statement-breakpoint
CREATE INDEX "call_handoffs_conversation_idx" ON "call_handoffs" USING btree ("company_id","conversation_uuid");--> statement-breakpoint
CREATE INDEX "conversation_tags_key_value_idx" ON "conversation_tags" USING btree ("company_id","key",("value" #>> '{}'),"conversation_uuid");--> statement-breakpoint
CREATE INDEX "conversations_list_idx" ON "conversations" USING btree ("company_id","start_time","id");--> statement-breakpoint
CREATE INDEX "conversations_agent_list_idx" ON "conversations" USING btree ("company_id","agent_user_id","start_time","id");--> statement-breakpoint
CREATE INDEX "conversations_product_list_idx" ON "conversations" USING btree ("company_id","product_id","start_time","id");--> statement-breakpoint
CREATE INDEX "conversations_state_list_idx" ON "conversations" USING btree ("company_id","state","start_time","id");--> statement-breakpoint
CREATE INDEX "conversations_media_list_idx" ON "conversations" USING btree ("company_id","latest_upload_status","start_time","id");--> statement-breakpoint
CREATE INDEX "uploads_conversation_idx" ON "uploads" USING btree ("company_id","conversation_uuid","id");
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"company_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"scopes" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "call_handoffs" (
	"company_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"conversation_uuid" uuid,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"final" boolean DEFAULT false NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finalized_at" timestamp with time zone,
	CONSTRAINT "call_handoffs_company_id_id_pk" PRIMARY KEY("company_id","id"),
	CONSTRAINT "call_handoffs_final_check" CHECK ("call_handoffs"."final" = ("call_handoffs"."finalized_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "companies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_tags" (
	"company_id" uuid NOT NULL,
	"conversation_uuid" uuid NOT NULL,
	"key" text NOT NULL,
	"type" text NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversation_tags_company_id_conversation_uuid_key_pk" PRIMARY KEY("company_id","conversation_uuid","key"),
	CONSTRAINT "conversation_tags_type_check" CHECK ("conversation_tags"."type" in ('string', 'integer', 'boolean'))
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"company_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"agent_user_id" uuid NOT NULL,
	"conversation_id" text NOT NULL,
	"product_id" bigint NOT NULL,
	"start_time" double precision NOT NULL,
	"speaker_separation" text DEFAULT 'diarize' NOT NULL,
	"channel_map" text[],
	"transcript" jsonb,
	"state" text DEFAULT 'created' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversations_company_id_id_pk" PRIMARY KEY("company_id","id"),
	CONSTRAINT "conversations_state_check" CHECK ("conversations"."state" in ('created', 'live', 'stopped')),
	CONSTRAINT "conversations_separation_check" CHECK ("conversations"."speaker_separation" in ('diarize', 'channels'))
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "jobs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"company_id" uuid,
	"kind" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"dedupe_key" text,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer DEFAULT 5 NOT NULL,
	"locked_until" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_grants" (
	"company_id" uuid NOT NULL,
	"product_id" bigint NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "product_grants_company_id_product_id_user_id_pk" PRIMARY KEY("company_id","product_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "products" (
	"company_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "products_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "products_company_id_id_pk" PRIMARY KEY("company_id","id"),
	CONSTRAINT "products_status_check" CHECK ("products"."status" in ('active', 'archived'))
);
--> statement-breakpoint
CREATE TABLE "uploads" (
	"company_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "uploads_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"conversation_uuid" uuid NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"media_kind" text NOT NULL,
	"object_key" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"reason" text,
	"size" bigint,
	"probe" jsonb,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "uploads_company_id_id_pk" PRIMARY KEY("company_id","id"),
	CONSTRAINT "uploads_status_check" CHECK ("uploads"."status" in ('pending', 'uploaded', 'ready', 'rejected', 'expired'))
);
--> statement-breakpoint
CREATE TABLE "users" (
	"company_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"seed_ref" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_company_id_id_pk" PRIMARY KEY("company_id","id"),
	CONSTRAINT "users_role_check" CHECK ("users"."role" in ('admin', 'agent'))
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_handoffs" ADD CONSTRAINT "call_handoffs_company_id_conversation_uuid_conversations_company_id_id_fk" FOREIGN KEY ("company_id","conversation_uuid") REFERENCES "public"."conversations"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_tags" ADD CONSTRAINT "conversation_tags_company_id_conversation_uuid_conversations_company_id_id_fk" FOREIGN KEY ("company_id","conversation_uuid") REFERENCES "public"."conversations"("company_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_company_id_agent_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","agent_user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_company_id_product_id_products_company_id_id_fk" FOREIGN KEY ("company_id","product_id") REFERENCES "public"."products"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_grants" ADD CONSTRAINT "product_grants_company_id_product_id_products_company_id_id_fk" FOREIGN KEY ("company_id","product_id") REFERENCES "public"."products"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_grants" ADD CONSTRAINT "product_grants_company_id_user_id_users_company_id_id_fk" FOREIGN KEY ("company_id","user_id") REFERENCES "public"."users"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "uploads" ADD CONSTRAINT "uploads_company_id_conversation_uuid_conversations_company_id_id_fk" FOREIGN KEY ("company_id","conversation_uuid") REFERENCES "public"."conversations"("company_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "call_handoffs_open_idx" ON "call_handoffs" USING btree ("created_at") WHERE not "call_handoffs"."final";--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_pair_idx" ON "conversations" USING btree ("company_id","agent_user_id","conversation_id");--> statement-breakpoint
CREATE INDEX "conversations_company_conversation_idx" ON "conversations" USING btree ("company_id","conversation_id");--> statement-breakpoint
CREATE INDEX "jobs_due_idx" ON "jobs" USING btree ("run_at");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_dedupe_idx" ON "jobs" USING btree ("dedupe_key");--> statement-breakpoint
CREATE INDEX "product_grants_user_idx" ON "product_grants" USING btree ("company_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "products_company_name_idx" ON "products" USING btree ("company_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "uploads_object_key_idx" ON "uploads" USING btree ("company_id","object_key");--> statement-breakpoint
CREATE INDEX "uploads_status_expiry_idx" ON "uploads" USING btree ("status","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_company_seed_ref_idx" ON "users" USING btree ("company_id","seed_ref");--> statement-breakpoint
CREATE INDEX "users_company_email_idx" ON "users" USING btree ("company_id",lower("email"));
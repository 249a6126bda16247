CREATE TABLE "call_analyses" (
	"company_id" uuid NOT NULL,
	"conversation_uuid" uuid NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"source" text NOT NULL,
	"run_id" uuid NOT NULL,
	"upload_id" bigint,
	"figures" jsonb,
	"method" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "call_analyses_company_id_conversation_uuid_pk" PRIMARY KEY("company_id","conversation_uuid"),
	CONSTRAINT "call_analyses_status_check" CHECK ("call_analyses"."status" in ('pending', 'ready', 'failed')),
	CONSTRAINT "call_analyses_source_check" CHECK ("call_analyses"."source" in ('recording', 'transcript'))
);
--> statement-breakpoint
ALTER TABLE "call_analyses" ADD CONSTRAINT "call_analyses_company_id_conversation_uuid_conversations_company_id_id_fk" FOREIGN KEY ("company_id","conversation_uuid") REFERENCES "public"."conversations"("company_id","id") ON DELETE cascade ON UPDATE no action;
CREATE TABLE "call_transcriptions" (
	"company_id" uuid NOT NULL,
	"conversation_uuid" uuid NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"run_id" uuid NOT NULL,
	"upload_id" bigint,
	"engine" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "call_transcriptions_company_id_conversation_uuid_pk" PRIMARY KEY("company_id","conversation_uuid"),
	CONSTRAINT "call_transcriptions_status_check" CHECK ("call_transcriptions"."status" in ('pending', 'ready', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "transcript_source" text;--> statement-breakpoint
ALTER TABLE "call_transcriptions" ADD CONSTRAINT "call_transcriptions_company_id_conversation_uuid_conversations_company_id_id_fk" FOREIGN KEY ("company_id","conversation_uuid") REFERENCES "public"."conversations"("company_id","id") ON DELETE cascade ON UPDATE no action;
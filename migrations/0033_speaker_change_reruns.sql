-- A call's roles come from its channels (decision 28: speaker_separation and channel_map), so a change of
-- either re-runs what was made from its latest ready recording with them: the analysis, and the
-- transcription when the call has one and no client transcript (decision 29: a role per channel). Before,
-- a create that corrected the map kept the old figures, with agent and customer the wrong way round.
--
-- A trigger, not cqs_create_call, so that the rule holds whatever statement changes the speaker, and sees
-- the old values under the row's lock (RETURNING shows only the new ones). A new call fires nothing, and the
-- WHEN clause keeps an update that sends the same speaker (every repeated create that sends one) free.
--
-- The runs are those of src/domain/analysis/analysis.ts (queueRecordingAnalysis) and
-- src/domain/transcription/transcription.ts (queueTranscription): a new run id on the call's one row and a
-- job with the payload {conversationUuid, runId, uploadId}. The job kinds are the trigger's arguments, the
-- values of ANALYZE_CALL_JOB and TRANSCRIBE_CALL_JOB. "Latest ready" is latestReadyUploadId's order.
CREATE FUNCTION cqs_speaker_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_upload_id bigint;
  v_run uuid;
BEGIN
  SELECT u.id INTO v_upload_id FROM uploads u
    WHERE u.company_id = NEW.company_id AND u.conversation_uuid = NEW.id AND u.status = 'ready'
    ORDER BY u.updated_at DESC, u.id DESC LIMIT 1;
  IF v_upload_id IS NULL THEN
    -- No recording: a transcript's analysis takes its roles from the segments, not from the channels.
    RETURN NULL;
  END IF;

  v_run := gen_random_uuid();
  INSERT INTO call_analyses AS a (company_id, conversation_uuid, status, reason, source, run_id, upload_id,
      figures, method)
    VALUES (NEW.company_id, NEW.id, 'pending', NULL, 'recording', v_run, v_upload_id, NULL, NULL)
    ON CONFLICT (company_id, conversation_uuid) DO UPDATE SET status = excluded.status, reason = NULL,
      source = excluded.source, run_id = excluded.run_id, upload_id = excluded.upload_id, figures = NULL,
      method = NULL, updated_at = now();
  INSERT INTO jobs (kind, company_id, payload)
    VALUES (TG_ARGV[0], NEW.company_id,
      jsonb_build_object('conversationUuid', NEW.id, 'runId', v_run, 'uploadId', v_upload_id));

  -- A transcription only where one was made or asked for (an engine was configured), and never over a
  -- client's transcript (the rule of callHasClientTranscript).
  IF NOT (NEW.transcript IS NOT NULL AND NEW.transcript_source IS DISTINCT FROM 'transcription') THEN
    v_run := gen_random_uuid();
    UPDATE call_transcriptions SET status = 'pending', reason = NULL, engine = NULL, run_id = v_run,
        upload_id = v_upload_id, updated_at = now()
      WHERE company_id = NEW.company_id AND conversation_uuid = NEW.id;
    IF FOUND THEN
      INSERT INTO jobs (kind, company_id, payload)
        VALUES (TG_ARGV[1], NEW.company_id,
          jsonb_build_object('conversationUuid', NEW.id, 'runId', v_run, 'uploadId', v_upload_id));
    END IF;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER conversations_speaker_changed AFTER UPDATE OF speaker_separation, channel_map ON conversations
  FOR EACH ROW
  WHEN (OLD.speaker_separation IS DISTINCT FROM NEW.speaker_separation
    OR OLD.channel_map IS DISTINCT FROM NEW.channel_map)
  EXECUTE FUNCTION cqs_speaker_changed('call.analyze', 'call.transcribe');

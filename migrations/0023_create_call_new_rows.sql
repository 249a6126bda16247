-- cqs_create_call (0019) inserts a new call's tags and its transcript's analysis row without ON CONFLICT
-- (issue 16). PostgreSQL carries out an upsert as a speculative insertion: a look in the unique index first,
-- then the row, then a second write to confirm it. A call this statement has just inserted has no tags and
-- no analysis, and no other transaction sees it before the commit, so nothing can conflict: keys are unique
-- within a request (src/domain/calls/tags.ts). pgbench of the statement at ten clients: 3,730-3,910 creates a
-- second against 3,370-3,730 with the upserts, in interleaved runs. An existing call keeps the upserts.
CREATE OR REPLACE FUNCTION cqs_create_call(
  p_company_id uuid,
  p_viewer_id uuid,
  p_viewer_is_admin boolean,
  p_agent_email text,
  p_product_id bigint,
  p_conversation_id text,
  p_start_time double precision,
  p_speaker_separation text,
  p_channel_map text,
  p_transcript text,
  p_set_start_time boolean,
  p_set_speaker boolean,
  p_set_transcript boolean,
  p_tags text,
  p_analysis_run_id uuid,
  p_analysis_job_kind text,
  p_upload_filename text,
  p_upload_content_type text,
  p_upload_media_kind text,
  p_upload_object_key text,
  p_upload_expires_at timestamptz,
  OUT outcome text,
  OUT agent_ids uuid[],
  OUT product_status text,
  OUT agent_address text,
  OUT call_uuid uuid,
  OUT call_state text,
  OUT was_inserted boolean,
  OUT new_upload_id bigint,
  OUT analysis_queued boolean
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_agent_id uuid;
BEGIN
  analysis_queued := false;
  SELECT a.ids, a.email INTO agent_ids, agent_address FROM cqs_call_agent(p_company_id, p_agent_email) a;
  IF agent_ids IS NULL OR cardinality(agent_ids) > 1 THEN
    outcome := CASE WHEN agent_ids IS NULL THEN 'agent-missing' ELSE 'agent-ambiguous' END;
    RETURN;
  END IF;
  v_agent_id := agent_ids[1];

  product_status := cqs_visible_product_status(p_company_id, p_viewer_id, p_viewer_is_admin, p_product_id);
  IF product_status IS NULL OR product_status <> 'active' THEN
    outcome := CASE WHEN product_status IS NULL THEN 'product-missing' ELSE 'product-inactive' END;
    RETURN;
  END IF;

  -- On an existing pair only what the request sent changes (the product always).
  INSERT INTO conversations AS c (company_id, agent_user_id, conversation_id, product_id, start_time,
      speaker_separation, channel_map, transcript, transcript_source)
    VALUES (p_company_id, v_agent_id, p_conversation_id, p_product_id, p_start_time,
      p_speaker_separation,
      CASE WHEN p_channel_map IS NULL THEN NULL
        ELSE ARRAY(SELECT jsonb_array_elements_text(p_channel_map::jsonb)) END,
      p_transcript::json,
      CASE WHEN p_transcript IS NULL THEN NULL ELSE 'client' END)
    ON CONFLICT (company_id, agent_user_id, conversation_id) DO UPDATE SET
      updated_at = now(),
      product_id = excluded.product_id,
      start_time = CASE WHEN p_set_start_time THEN excluded.start_time ELSE c.start_time END,
      speaker_separation = CASE WHEN p_set_speaker THEN excluded.speaker_separation ELSE c.speaker_separation END,
      channel_map = CASE WHEN p_set_speaker THEN excluded.channel_map ELSE c.channel_map END,
      transcript = CASE WHEN p_set_transcript THEN excluded.transcript ELSE c.transcript END,
      transcript_source = CASE WHEN p_set_transcript THEN excluded.transcript_source ELSE c.transcript_source END
    -- xmax is 0 on a row this statement inserted, and set on one it updated.
    RETURNING c.id, c.state, (c.xmax = 0) INTO call_uuid, call_state, was_inserted;

  -- Tags in the order sent (sorted by key), so concurrent requests that share keys lock rows in one order.
  -- A call this statement inserted has none yet, and no other transaction sees it: plain inserts.
  IF p_tags IS NOT NULL AND was_inserted THEN
    INSERT INTO conversation_tags (company_id, conversation_uuid, key, type, value)
      SELECT p_company_id, call_uuid, e.tag->>'key', e.tag->>'type', e.tag->'value'
        FROM jsonb_array_elements(p_tags::jsonb) WITH ORDINALITY AS e(tag, n) ORDER BY e.n;
  ELSIF p_tags IS NOT NULL THEN
    INSERT INTO conversation_tags AS t (company_id, conversation_uuid, key, type, value)
      SELECT p_company_id, call_uuid, e.tag->>'key', e.tag->>'type', e.tag->'value'
        FROM jsonb_array_elements(p_tags::jsonb) WITH ORDINALITY AS e(tag, n) ORDER BY e.n
      ON CONFLICT (company_id, conversation_uuid, key) DO UPDATE SET
        type = excluded.type, value = excluded.value, updated_at = now();
  END IF;

  -- The transcript's analysis, unless the call has a ready recording (src/domain/analysis/analysis.ts); a
  -- call this statement inserted has neither a recording nor an analysis yet.
  IF p_analysis_run_id IS NOT NULL AND was_inserted THEN
    INSERT INTO call_analyses (company_id, conversation_uuid, status, reason, source, run_id, upload_id,
        figures, method)
      VALUES (p_company_id, call_uuid, 'pending', NULL, 'transcript', p_analysis_run_id, NULL, NULL, NULL);
    analysis_queued := true;
  ELSIF p_analysis_run_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM uploads u
      WHERE u.company_id = p_company_id AND u.conversation_uuid = call_uuid AND u.status = 'ready') THEN
    INSERT INTO call_analyses AS a (company_id, conversation_uuid, status, reason, source, run_id, upload_id,
        figures, method)
      VALUES (p_company_id, call_uuid, 'pending', NULL, 'transcript', p_analysis_run_id, NULL, NULL, NULL)
      ON CONFLICT (company_id, conversation_uuid) DO UPDATE SET status = excluded.status,
        reason = NULL, source = excluded.source, run_id = excluded.run_id, upload_id = NULL, figures = NULL,
        method = NULL, updated_at = now();
    analysis_queued := true;
  END IF;
  IF analysis_queued THEN
    INSERT INTO jobs (kind, company_id, payload)
      VALUES (p_analysis_job_kind, p_company_id, jsonb_build_object('conversationUuid', call_uuid,
        'runId', p_analysis_run_id, 'uploadId', NULL));
  END IF;

  IF p_upload_object_key IS NOT NULL THEN
    INSERT INTO uploads (company_id, conversation_uuid, filename, content_type, media_kind, object_key,
        expires_at)
      VALUES (p_company_id, call_uuid, p_upload_filename, p_upload_content_type, p_upload_media_kind,
        p_upload_object_key, p_upload_expires_at)
      RETURNING id INTO new_upload_id;
  END IF;

  INSERT INTO events (company_id, type, data)
    VALUES (p_company_id, CASE WHEN was_inserted THEN 'call.created' ELSE 'call.updated' END,
      jsonb_build_object('call_id', call_uuid, 'conversation_id', p_conversation_id,
        'agent_email', agent_address, 'state', call_state)
      || CASE WHEN new_upload_id IS NULL THEN '{}'::jsonb
         ELSE jsonb_build_object('upload_id', new_upload_id) END);
  outcome := 'ok';
END;
$$;

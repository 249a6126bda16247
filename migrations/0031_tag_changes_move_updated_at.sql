-- A change of a call's tags moves its updated_at ("when the call last changed"): call/create did, while
-- call/add_tags (cqs_add_tags, 0026) and the live endpoints (src/domain/calls/live.ts) wrote the tags and a
-- call.updated event and left updated_at as it was, so a client comparing it missed those changes. The call's
-- row is locked already (FOR UPDATE in cqs_call_of_pair), and updated_at is in no index: a HOT update.
CREATE OR REPLACE FUNCTION cqs_add_tags(
  p_company_id uuid,
  p_agent_email text,
  p_conversation_id text,
  p_tags text,
  OUT outcome text,
  OUT agent_ids uuid[]
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_email text;
  v_id uuid;
  v_state text;
BEGIN
  SELECT p.outcome, p.agent_ids, p.agent_email, p.call_uuid, p.call_state
    INTO outcome, agent_ids, v_email, v_id, v_state
    FROM cqs_call_of_pair(p_company_id, p_agent_email, p_conversation_id, true) p;
  IF outcome IS NOT NULL THEN
    RETURN;
  END IF;
  -- Tags in the order sent (sorted by key), so concurrent requests that share keys lock rows in one order.
  INSERT INTO conversation_tags AS t (company_id, conversation_uuid, key, type, value)
    SELECT p_company_id, v_id, e.tag->>'key', e.tag->>'type', e.tag->'value'
      FROM jsonb_array_elements(p_tags::jsonb) WITH ORDINALITY AS e(tag, n) ORDER BY e.n
    ON CONFLICT (company_id, conversation_uuid, key) DO UPDATE SET
      type = excluded.type, value = excluded.value, updated_at = now();
  -- The call changed (decision 27 counts its tags): its updated_at moves, as call/create's does.
  UPDATE conversations SET updated_at = now() WHERE company_id = p_company_id AND id = v_id;
  INSERT INTO events (company_id, type, data)
    VALUES (p_company_id, 'call.updated', jsonb_build_object('call_id', v_id,
      'conversation_id', p_conversation_id, 'agent_email', v_email, 'state', v_state));
  outcome := 'ok';
END;
$$;

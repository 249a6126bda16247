-- cqs_add_tags (0014) read its call without a lock. A call/stop (or start) that committed between that read
-- and the tags' insert left the call.updated event saying the old state, after call.stopped in the log, so
-- a reader of the feed believed a stopped call live; a DELETE in between failed the tags' foreign key. Now
-- it locks the call as start and stop do: the state it reports is the one its change was made on, and a
-- call deleted first is not found (404).
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
  INSERT INTO events (company_id, type, data)
    VALUES (p_company_id, 'call.updated', jsonb_build_object('call_id', v_id,
      'conversation_id', p_conversation_id, 'agent_email', v_email, 'state', v_state));
  outcome := 'ok';
END;
$$;

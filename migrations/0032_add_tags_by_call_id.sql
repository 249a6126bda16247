-- Tags added to a call named by its id (POST /api/v1/calls/{id}/tags). call/add_tags names the call by
-- (agent_email, conversation_id), and the email is looked up among the company's active users: the web app,
-- which tagged the call on screen through it, wrote to another call (a new user holding the email of the
-- call's deactivated agent) or failed (the agent deactivated). The write itself (the tags, updated_at, the
-- call.updated event) moves to cqs_write_tags, which both functions call.
CREATE FUNCTION cqs_write_tags(
  p_company_id uuid,
  p_call_uuid uuid,
  p_conversation_id text,
  p_agent_email text,
  p_state text,
  p_tags text
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- Tags in the order sent (sorted by key), so concurrent requests that share keys lock rows in one order.
  INSERT INTO conversation_tags AS t (company_id, conversation_uuid, key, type, value)
    SELECT p_company_id, p_call_uuid, e.tag->>'key', e.tag->>'type', e.tag->'value'
      FROM jsonb_array_elements(p_tags::jsonb) WITH ORDINALITY AS e(tag, n) ORDER BY e.n
    ON CONFLICT (company_id, conversation_uuid, key) DO UPDATE SET
      type = excluded.type, value = excluded.value, updated_at = now();
  -- The call changed (decision 27 counts its tags): its updated_at moves, as call/create's does.
  UPDATE conversations SET updated_at = now() WHERE company_id = p_company_id AND id = p_call_uuid;
  INSERT INTO events (company_id, type, data)
    VALUES (p_company_id, 'call.updated', jsonb_build_object('call_id', p_call_uuid,
      'conversation_id', p_conversation_id, 'agent_email', p_agent_email, 'state', p_state));
END;
$$;
--> statement-breakpoint
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
  PERFORM cqs_write_tags(p_company_id, v_id, p_conversation_id, v_email, v_state, p_tags);
  outcome := 'ok';
END;
$$;
--> statement-breakpoint
-- The call `p_call_uuid` of the company, locked as cqs_call_of_pair locks it, when the viewer may see it
-- (p_agent_user_id null: every call of the company; else only that agent's): its tags written; else
-- 'call-missing' and nothing written.
CREATE FUNCTION cqs_add_tags_to_call(
  p_company_id uuid,
  p_call_uuid uuid,
  p_agent_user_id uuid,
  p_tags text,
  OUT outcome text
) LANGUAGE plpgsql AS $$
DECLARE
  v_conversation_id text;
  v_email text;
  v_state text;
BEGIN
  SELECT c.conversation_id, c.state, u.email INTO v_conversation_id, v_state, v_email
    FROM conversations c JOIN users u ON u.company_id = c.company_id AND u.id = c.agent_user_id
    WHERE c.company_id = p_company_id AND c.id = p_call_uuid
      AND (p_agent_user_id IS NULL OR c.agent_user_id = p_agent_user_id)
    FOR UPDATE OF c;
  IF v_conversation_id IS NULL THEN
    outcome := 'call-missing';
    RETURN;
  END IF;
  PERFORM cqs_write_tags(p_company_id, p_call_uuid, v_conversation_id, v_email, v_state, p_tags);
  outcome := 'ok';
END;
$$;

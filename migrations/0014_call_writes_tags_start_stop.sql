-- call/add_tags, call/start and call/stop in one round trip each (issue 16), as call/create in 0013: the
-- statements their transactions ran, in one volatile function (a fresh snapshot per statement, as in READ
-- COMMITTED), writing nothing when a check fails and returning which check did for the domain to throw.
-- Each takes its agent and call with cqs_call_of_pair. Outcomes: 'agent-missing', 'agent-ambiguous' (agent_ids), 'product-missing', 'product-inactive'
-- (product_status), 'conversation-missing', 'call-stopped' (a start of a stopped call), 'ok'.

-- The pair's call: the agent (as in cqs_create_call) and its call with this conversation_id, locked until
-- the statement's transaction ends when p_lock. outcome is null when both were found, 'conversation-missing'
-- (with the agent) when the agent has no such call, or the agent's failure.
CREATE FUNCTION cqs_call_of_pair(
  p_company_id uuid,
  p_agent_email text,
  p_conversation_id text,
  p_lock boolean,
  OUT outcome text,
  OUT agent_ids uuid[],
  OUT agent_email text,
  OUT call_uuid uuid,
  OUT call_state text
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  SELECT a.ids, a.email INTO agent_ids, agent_email FROM cqs_call_agent(p_company_id, p_agent_email) a;
  IF agent_ids IS NULL OR cardinality(agent_ids) > 1 THEN
    outcome := CASE WHEN agent_ids IS NULL THEN 'agent-missing' ELSE 'agent-ambiguous' END;
    RETURN;
  END IF;
  IF p_lock THEN
    SELECT c.id, c.state INTO call_uuid, call_state FROM conversations c
      WHERE c.company_id = p_company_id AND c.agent_user_id = agent_ids[1]
        AND c.conversation_id = p_conversation_id
      FOR UPDATE;
  ELSE
    SELECT c.id, c.state INTO call_uuid, call_state FROM conversations c
      WHERE c.company_id = p_company_id AND c.agent_user_id = agent_ids[1]
        AND c.conversation_id = p_conversation_id;
  END IF;
  IF call_uuid IS NULL THEN
    outcome := 'conversation-missing';
  END IF;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION cqs_add_tags(
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
    FROM cqs_call_of_pair(p_company_id, p_agent_email, p_conversation_id, false) p;
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
--> statement-breakpoint
CREATE FUNCTION cqs_stop_call(
  p_company_id uuid,
  p_agent_email text,
  p_conversation_id text,
  p_metadata text,
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
  outcome := 'ok';
  IF v_state = 'stopped' THEN
    RETURN;
  END IF;
  UPDATE conversations c SET state = 'stopped', updated_at = now(),
      metadata = CASE WHEN p_metadata IS NULL THEN c.metadata ELSE c.metadata || p_metadata::jsonb END
    WHERE c.company_id = p_company_id AND c.id = v_id;
  INSERT INTO events (company_id, type, data)
    VALUES (p_company_id, 'call.stopped', jsonb_build_object('call_id', v_id,
      'conversation_id', p_conversation_id, 'agent_email', v_email, 'state', 'stopped'));
END;
$$;
--> statement-breakpoint
CREATE FUNCTION cqs_start_call(
  p_company_id uuid,
  p_viewer_id uuid,
  p_viewer_is_admin boolean,
  p_agent_email text,
  p_conversation_id text,
  p_product_id bigint,
  p_start_time double precision,
  p_metadata text,
  OUT outcome text,
  OUT agent_ids uuid[],
  OUT product_status text
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_email text;
  v_id uuid;
  v_state text;
  v_data jsonb;
BEGIN
  SELECT a.ids, a.email INTO agent_ids, v_email FROM cqs_call_agent(p_company_id, p_agent_email) a;
  IF agent_ids IS NULL OR cardinality(agent_ids) > 1 THEN
    outcome := CASE WHEN agent_ids IS NULL THEN 'agent-missing' ELSE 'agent-ambiguous' END;
    RETURN;
  END IF;
  IF p_product_id IS NOT NULL THEN
    product_status := cqs_visible_product_status(p_company_id, p_viewer_id, p_viewer_is_admin, p_product_id);
    IF product_status IS NULL OR product_status <> 'active' THEN
      outcome := CASE WHEN product_status IS NULL THEN 'product-missing' ELSE 'product-inactive' END;
      RETURN;
    END IF;
  END IF;
  SELECT c.id, c.state INTO v_id, v_state FROM conversations c
    WHERE c.company_id = p_company_id AND c.agent_user_id = agent_ids[1] AND c.conversation_id = p_conversation_id
    FOR UPDATE;
  IF v_id IS NULL THEN
    -- The spec's start body names no product: a call start creates has none until call/create sets one.
    INSERT INTO conversations (company_id, agent_user_id, conversation_id, product_id, start_time, metadata,
        state)
      VALUES (p_company_id, agent_ids[1], p_conversation_id, p_product_id, p_start_time,
        coalesce(p_metadata::jsonb, '{}'::jsonb), 'live')
      ON CONFLICT (company_id, agent_user_id, conversation_id) DO NOTHING
      RETURNING id INTO v_id;
    IF v_id IS NOT NULL THEN
      -- A start that creates the call tells of both: the call exists, and it is live.
      v_data := jsonb_build_object('call_id', v_id, 'conversation_id', p_conversation_id,
        'agent_email', v_email);
      INSERT INTO events (company_id, type, data) VALUES
        (p_company_id, 'call.created', v_data || '{"state": "created"}'),
        (p_company_id, 'call.started', v_data || '{"state": "live"}');
      outcome := 'ok';
      RETURN;
    END IF;
    -- A concurrent start (or create) made the pair first: continue with its row.
    SELECT c.id, c.state INTO v_id, v_state FROM conversations c
      WHERE c.company_id = p_company_id AND c.agent_user_id = agent_ids[1]
        AND c.conversation_id = p_conversation_id
      FOR UPDATE;
    IF v_id IS NULL THEN
      outcome := 'conversation-missing';
      RETURN;
    END IF;
  END IF;
  IF v_state = 'stopped' THEN
    outcome := 'call-stopped';
    RETURN;
  END IF;
  outcome := 'ok';
  IF v_state = 'live' THEN
    RETURN;
  END IF;
  UPDATE conversations c SET state = 'live', updated_at = now(),
      metadata = CASE WHEN p_metadata IS NULL THEN c.metadata ELSE c.metadata || p_metadata::jsonb END,
      product_id = coalesce(p_product_id, c.product_id)
    WHERE c.company_id = p_company_id AND c.id = v_id;
  INSERT INTO events (company_id, type, data)
    VALUES (p_company_id, 'call.started', jsonb_build_object('call_id', v_id,
      'conversation_id', p_conversation_id, 'agent_email', v_email, 'state', 'live'));
END;
$$;

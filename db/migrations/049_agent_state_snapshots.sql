-- A stateful agent's state beside the transcript (issue 45): the workflow writes it as an event, agent.state
-- { messageId, state }, with the answer it followed, so that a branch switch, an edit, a regenerate or a fork resumes
-- from the state of its path's last answer. This index finds that event by message without reading the log.
CREATE INDEX events_agent_state ON events (conversation_id, (data->>'messageId'), id) WHERE type = 'agent.state';

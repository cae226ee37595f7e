-- Messages carry generative UI (a recipe card, brewery cards) and a stateful agent's structured answer
-- (a sous reply with its PatchSet) beside their text, so a reload shows what the live stream showed.
ALTER TABLE messages ADD COLUMN cards jsonb;
ALTER TABLE messages ADD COLUMN structured jsonb;

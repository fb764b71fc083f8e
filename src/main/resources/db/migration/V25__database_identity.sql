-- This database's identity, written once (a random id): every event a pod publishes carries it (the record header
-- inboxDatabase, routes/inbox-publish.camel.yaml), and a consumer whose database has another one skips the event as
-- another deployment's (adapter_inbox_claims_total{result="foreign-database"}, the alert
-- SurveyInboxForeignEvents). Two deployments sharing one topic and consumer group (a staging overlay copied from
-- prod) took each other's events for rows their database had lost: the critical lost-rows alert and its restore
-- runbook, while each one's rows waited for events the other dropped. A restore keeps the identity (its own rows); a
-- database created anew gets another (then the topic's older events are foreign: the runbook says what that means).
-- A small table of one row.
CREATE TABLE IF NOT EXISTS inbox_database (
    single     BOOLEAN PRIMARY KEY DEFAULT true CHECK (single),
    id         UUID NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);
INSERT INTO inbox_database (id) VALUES (gen_random_uuid()) ON CONFLICT (single) DO NOTHING;

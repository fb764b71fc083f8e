-- One check value per payload key id (an HMAC of a fixed text under the key; nothing of the key can be read from
-- it), written by the first pod that starts with the key (inbox/PayloadKeyCheck). A pod whose key of the same id has
-- other bytes (a key regenerated under its old id, a Secret edited while pods still run the old one) refuses to
-- start: its rows would not open on the other pods (nor theirs on it), a system error charged per attempt, DEAD with a
-- failure reply within minutes. A small table, one row per key id ever used.
CREATE TABLE IF NOT EXISTS payload_key (
    key_id      TEXT PRIMARY KEY,
    check_value BYTEA NOT NULL,
    first_seen  TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

-- Resend detection: has this subject an earlier SEND that COMPLETED? Then a new SEND is a resend request
-- (always false for any other message type: PostgreSQL checks :#msgType once, before it reads an index).
-- Run by: routes/inbox-register.camel.yaml, step inbox-register-resend-check (camel-sql).
-- Why this WHERE: only rows before this one count (id < :#id; the synchronous path passes a value
-- above every stored id), so a later row can never turn an earlier one into a resend.
SELECT :#msgType = 'SEND' AND EXISTS (
    SELECT 1
      FROM inbox_message
     WHERE srvy_drawup_no = :#srvyDrawupNo
       AND msg_type = 'SEND'
       AND status = 'COMPLETED'
       AND id < :#id)

-- The legacy system took the reply (2xx): SENDING -> SENT.
-- Run by: routes/inbox-reply.camel.yaml, step inbox-reply-record-sent (camel-sql).
-- Why this WHERE: only the sender holding the obligation (SENDING) records its result.
UPDATE inbox_message
   SET reply_status = 'SENT',
       reply_last_error = NULL,
       reply_updated_at = now()
 WHERE id = :#id
   AND reply_status = 'SENDING'

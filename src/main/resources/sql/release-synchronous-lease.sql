-- Gives back the subject's synchronous lease once its registration ended, whatever its outcome.
-- Run by: routes/inbox-receive.camel.yaml, step inbox-receive-release-lease-statement (camel-sql).
-- Why this WHERE: fenced by the holder: a registration that outlived its lease (taken over by the next)
-- never removes its successor's.
DELETE FROM synchronous_lease
 WHERE srvy_drawup_no = :#srvyDrawupNo
   AND holder = :#holder

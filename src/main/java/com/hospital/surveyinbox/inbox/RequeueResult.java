package com.hospital.surveyinbox.inbox;

/**
 * What an operator requeue did.
 *
 * @param fromStatus the row's status before (null when it does not exist)
 * @param event      the event to republish when requeued, else null
 */
public record RequeueResult(boolean found, String fromStatus, InboxEvent event) {

    static RequeueResult notFound() {
        return new RequeueResult(false, null, null);
    }

    static RequeueResult conflict(String fromStatus) {
        return new RequeueResult(true, fromStatus, null);
    }

    static RequeueResult requeued(String fromStatus, InboxEvent event) {
        return new RequeueResult(true, fromStatus, event);
    }

    public boolean requeued() {
        return event != null;
    }
}

package com.hospital.surveyinbox.inbox;

/**
 * Result of storing a received message.
 *
 * @param fresh false when an {@code Idempotency-Key} replay returned an earlier row (nothing stored, no event)
 */
public record Acceptance(long inboxId, String srvyDrawupNo, String msgType, boolean fresh) {

    public InboxEvent event() {
        return new InboxEvent(Long.toString(inboxId), srvyDrawupNo, msgType);
    }
}

package com.hospital.surveyinbox.inbox;

/**
 * Result of storing a received message.
 *
 * @param fresh false when an {@code Idempotency-Key} replay returned an earlier row (nothing stored, no event)
 * @param traceParent the trace the message was received in (carried by its event), or null
 * @param keyReusedBy for a replay, how the message differs from its key's first row (another subject or type,
 *                    another body), or null for the same message: such a message is stored nowhere
 */
public record Acceptance(long inboxId, String srvyDrawupNo, String msgType, boolean fresh, String traceParent,
                         String keyReusedBy) {

    public Acceptance(long inboxId, String srvyDrawupNo, String msgType, boolean fresh, String traceParent) {
        this(inboxId, srvyDrawupNo, msgType, fresh, traceParent, null);
    }

    public Acceptance(long inboxId, String srvyDrawupNo, String msgType, boolean fresh) {
        this(inboxId, srvyDrawupNo, msgType, fresh, null, null);
    }

    /** The {@code resultMessage} of the 200 Y: a replayed key says it returned the first row. */
    public String answer() {
        return fresh ? "received" : "received (duplicate Idempotency-Key, first inboxId returned)";
    }

    public InboxEvent event() {
        return new InboxEvent(Long.toString(inboxId), srvyDrawupNo, msgType, traceParent);
    }
}

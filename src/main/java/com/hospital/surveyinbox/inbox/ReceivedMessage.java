package com.hospital.surveyinbox.inbox;

/**
 * A message that passed reception validation, ready to store.
 *
 * @param payload        the request body exactly as received (valid UTF-8 JSON object)
 * @param idempotencyKey the sender's {@code Idempotency-Key} header, or null
 * @param traceParent    the W3C {@code traceparent} of the trace the message was received in, or null
 */
public record ReceivedMessage(String srvyDrawupNo, String msgType, byte[] payload, String idempotencyKey,
                              String traceParent) {

    public ReceivedMessage(String srvyDrawupNo, String msgType, byte[] payload, String idempotencyKey) {
        this(srvyDrawupNo, msgType, payload, idempotencyKey, null);
    }

    /** This message, received in the trace {@code traceParent}. */
    public ReceivedMessage inTrace(String traceParent) {
        return new ReceivedMessage(srvyDrawupNo, msgType, payload, idempotencyKey, traceParent);
    }
}

package com.hospital.surveyinbox.inbox;

/**
 * A message that passed reception validation, ready to store.
 *
 * @param payload        the request body exactly as received (valid UTF-8 JSON object)
 * @param idempotencyKey the sender's {@code Idempotency-Key} header, or null
 */
public record ReceivedMessage(String srvyDrawupNo, String msgType, byte[] payload, String idempotencyKey) {
}

package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.ReplyReason;

/**
 * What one attempt of the registration came to ({@code exchangeProperty.outcome} of the routes).
 *
 * @param failureReason null on success; the downstream's message for a business error (the row's own
 *                      patient values masked), {@code system error} otherwise
 * @param failureCode   the downstream's {@code code} of a business error (what logs carry), else null
 * @param reply         a reply owed to the legacy system even though the row completes, or null
 */
public record Outcome(boolean success, String failureReason, String failureCode, ReplyReason reply,
                      String replyReason, String failedDownstream, boolean deferred) {

    public static final String SYSTEM_ERROR = "system error";

    public static Outcome completed() {
        return new Outcome(true, null, null, null, null, null, false);
    }

    public static Outcome completedWithReply(ReplyReason reply, String reason) {
        return new Outcome(true, null, null, reply, reason, null, false);
    }

    public static Outcome businessFailure(String code, String reason) {
        return new Outcome(false, reason, code, null, null, null, false);
    }

    /** The downstream is plainly down (circuit open): the attempt is not charged. */
    public static Outcome deferred(String downstream) {
        return new Outcome(false, "waiting: " + downstream + " unavailable (circuit open)", null, null, null, downstream, true);
    }

    public static Outcome systemFailure(String downstream) {
        return new Outcome(false, SYSTEM_ERROR, null, null, null, downstream, false);
    }
}

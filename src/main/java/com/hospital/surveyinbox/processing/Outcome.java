package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.ReplyReason;

/**
 * What one attempt of the registration flow came to.
 *
 * @param failureReason null on success; the downstream's message for a business error, {@code system error} otherwise
 * @param reply         a reply owed to the legacy system even though the row completes, or null
 */
public record Outcome(boolean success, String failureReason, ReplyReason reply, String replyReason,
                      String failedDownstream, boolean deferred) {

    public static final String SYSTEM_ERROR = "system error";

    public static Outcome completed() {
        return new Outcome(true, null, null, null, null, false);
    }

    public static Outcome completedWithReply(ReplyReason reply, String reason) {
        return new Outcome(true, null, reply, reason, null, false);
    }

    public static Outcome businessFailure(String reason) {
        return new Outcome(false, reason, null, null, null, false);
    }

    /** The downstream is plainly down (circuit open): the attempt is not charged. */
    public static Outcome deferred(String downstream) {
        return new Outcome(false, "waiting: " + downstream + " unavailable (circuit open)", null, null, downstream, true);
    }

    public static Outcome systemFailure(String downstream) {
        return new Outcome(false, SYSTEM_ERROR, null, null, downstream, false);
    }
}

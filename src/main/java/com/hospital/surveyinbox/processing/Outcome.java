package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.ReplyReason;

/**
 * What one attempt of the registration flow came to.
 *
 * @param failureReason null on success; the downstream's message for a business error, {@code system error} otherwise
 * @param reply         a reply owed to the legacy system even though the row completes, or null
 */
public record Outcome(boolean success, String failureReason, ReplyReason reply, String replyReason,
                      String failedDownstream) {

    public static final String SYSTEM_ERROR = "system error";

    public static Outcome completed() {
        return new Outcome(true, null, null, null, null);
    }

    public static Outcome completedWithReply(ReplyReason reply, String reason) {
        return new Outcome(true, null, reply, reason, null);
    }

    public static Outcome businessFailure(String reason) {
        return new Outcome(false, reason, null, null, null);
    }

    public static Outcome systemFailure(String downstream) {
        return new Outcome(false, SYSTEM_ERROR, null, null, downstream);
    }
}

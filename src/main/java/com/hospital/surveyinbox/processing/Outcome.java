package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.ReplyReason;

/**
 * What one attempt of the registration came to ({@code exchangeProperty.outcome} of the routes).
 *
 * @param failureReason null on success; the downstream's message for a business error (the row's own
 *                      patient values masked), {@code system error} otherwise
 * @param failureCode   the downstream's {@code code} of a business error as logs may carry it ({@link #loggableCode}),
 *                      never null for a business error; null otherwise
 * @param reply         a reply owed to the legacy system even though the row completes, or null
 * @param failureDetail what the attempt's history records: the reason, and for a system error where and what
 *                      ({@code system error at inbox-register-survey-bundle (survey): HTTP 503}), so an operator
 *                      can tell which step failed from the API alone; null on success
 */
public record Outcome(boolean success, String failureReason, String failureCode, ReplyReason reply,
                      String replyReason, String failedDownstream, boolean deferred, String failureDetail) {

    public static final String SYSTEM_ERROR = "system error";
    /** The row's {@code last_error_code} after a system error: a bulk requeue after an outage selects by it. */
    public static final String SYSTEM_ERROR_CODE = "SYSTEM_ERROR";

    /**
     * A system error (5xx, timeout, refused, unreadable answer): charged, and on the synchronous path answered 503.
     * Its code is ours alone ({@link #loggableCode} never passes a downstream's SYSTEM_ERROR on).
     */
    public boolean systemError() {
        return !success && SYSTEM_ERROR_CODE.equals(failureCode);
    }

    public static Outcome completed() {
        return new Outcome(true, null, null, null, null, null, false, null);
    }

    public static Outcome completedWithReply(ReplyReason reply, String reason) {
        return new Outcome(true, null, null, reply, reason, null, false, null);
    }

    public static Outcome businessFailure(String code, String reason) {
        return new Outcome(false, reason, loggableCode(code), null, null, null, false, reason);
    }

    /** What is stored, logged and shown instead of a code that may name the patient. */
    static final String NON_STANDARD_CODE = "(non-standard code)";

    private static final java.util.regex.Pattern CODE = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,63}");
    private static final java.util.regex.Pattern NUMBER = java.util.regex.Pattern.compile("\\d{4}");

    /**
     * A downstream's {@code code} as a log line may carry it: an identifier such as {@code FORM_NOT_REGISTERED};
     * anything else (absent, free text, a code with a number in it that could be a patient's) is named, not quoted.
     */
    static String loggableCode(String code) {
        if (code == null || code.isBlank()) {
            return "(no code)";
        }
        // and never our own code for a system error: a bulk requeue by it would take business errors too
        return CODE.matcher(code).matches() && !NUMBER.matcher(code).find() && !SYSTEM_ERROR_CODE.equals(code)
                ? code : NON_STANDARD_CODE;
    }

    /** The downstream is plainly down (circuit open): the attempt is not charged. */
    public static Outcome deferred(String downstream) {
        String reason = "waiting: " + downstream + " unavailable (circuit open)";
        return new Outcome(false, reason, null, null, null, downstream, true, reason);
    }

    /** The database did not answer a statement of the registration before any downstream call: not charged either. */
    public static Outcome databaseUnavailable() {
        // "database" as the failed downstream: the synchronous path answers "<failedDownstream> unavailable"
        String reason = "waiting: the database did not answer";
        return new Outcome(false, reason, null, null, null, "database", true, reason);
    }

    /**
     * This registration's claim was gone before a call it may make only while it holds the row (a submission or a
     * resend, which the survey side does not key): reset as stuck (the worker was paused past stuck-processing-after)
     * or requeued, or on the synchronous path its subject's lease taken over, and perhaps registered by another since.
     * Nothing was sent; the record of this outcome is fenced like any other and changes nothing (a stale outcome); the
     * synchronous path answers 503 and records nothing.
     */
    public static Outcome claimLost() {
        String reason = "claim lost before a submission or resend: the row was reset or requeued (or the synchronous"
                + " registration's lease taken over) while this registration held it";
        // "registration lease" as the failed downstream: the synchronous path answers "<failedDownstream> unavailable"
        return new Outcome(false, reason, null, null, null, "registration lease", true, reason);
    }

    /**
     * The payload is sealed with a key this instance lacks: not charged (a configuration fault; another instance, or
     * this one once configured, registers it), the reason naming the key id.
     */
    public static Outcome payloadKeyMissing(String keyId) {
        String reason = "waiting: payload key '" + keyId + "' not configured on this instance";
        return new Outcome(false, reason, null, null, null, "payload key", true, reason);
    }

    /**
     * A system error: the row's reason is {@code system error} (CONTRACT §2), its code {@link #SYSTEM_ERROR_CODE},
     * and the attempt's history says where and what.
     *
     * @param call the step of the failed call (a route step id), or null when unknown
     * @param what what failed, in words that carry no data (an HTTP status, an exception's class name, our own words)
     */
    public static Outcome systemFailure(String downstream, String call, String what) {
        String detail = SYSTEM_ERROR + " at " + (call == null ? "an unknown step" : call)
                + (downstream == null ? "" : " (" + downstream + ")") + (what == null ? "" : ": " + what);
        return new Outcome(false, SYSTEM_ERROR, SYSTEM_ERROR_CODE, null, null, downstream, false, detail);
    }
}

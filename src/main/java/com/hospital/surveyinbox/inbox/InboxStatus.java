package com.hospital.surveyinbox.inbox;

/** Lifecycle of an inbox row (CONTRACT §2). */
public enum InboxStatus {
    /** Stored and acknowledged; its event is (or will be) on the topic. */
    RECEIVED,
    /** Claimed by exactly one worker, which holds the claim token. */
    PROCESSING,
    /** Registered downstream; terminal. */
    COMPLETED,
    /** An attempt failed; the redelivery job republishes it after the retry delay. */
    FAILED,
    /** The attempt that reached max-attempts failed; terminal until an operator requeues it. */
    DEAD;

    /**
     * The statuses of a row that still owes work, and so blocks later rows of the same srvyDrawupNo. Defined
     * here once: the SQL files list them literally, and {@code UnfinishedStatusesTest} checks that every SQL
     * file and migration that lists unfinished statuses lists exactly these.
     */
    public static final java.util.Set<InboxStatus> UNFINISHED = java.util.EnumSet.of(RECEIVED, PROCESSING, FAILED);

    /** {@link #UNFINISHED} as an SQL list, for {@code status IN …} (a constant: usable in annotations). */
    public static final String UNFINISHED_SQL = "('RECEIVED', 'PROCESSING', 'FAILED')";
}

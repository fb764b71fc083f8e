package com.hospital.surveyinbox.inbox;

import java.time.OffsetDateTime;

/**
 * What an operator's bulk requeue matches ({@code sql/find-requeue-candidates.sql}); null fields do not filter.
 *
 * @param status             DEAD or FAILED
 * @param lastErrorContains  a text the row's last error contains (as stored: patient values masked)
 * @param lastErrorCode      the downstream's code of the row's last business error, exactly (e.g. PATIENT_NOT_FOUND)
 * @param srvyDrawupNoPrefix the subjects' common prefix
 * @param receivedFrom       received at or after
 * @param receivedTo         received before
 */
public record RequeueFilter(InboxStatus status, String lastErrorContains, String lastErrorCode, String srvyDrawupNoPrefix,
                            OffsetDateTime receivedFrom, OffsetDateTime receivedTo) {

    /** The matching ids, oldest first, at most {@code limit}, and how many rows match in all. */
    public record Candidates(java.util.List<Long> ids, long matching) {
    }
}

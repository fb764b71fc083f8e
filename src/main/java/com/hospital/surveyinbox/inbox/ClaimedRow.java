package com.hospital.surveyinbox.inbox;

import java.util.UUID;

/**
 * A row this worker owns: the payload came back from the same UPDATE that claimed it, and every
 * outcome write must present {@code claimToken}.
 *
 * @param missingKey the key the payload was sealed with while the row waits for it (this instance does not have it and
 *                   the row is younger than adapter.crypto.key-wait; payload null), else null — past key-wait the
 *                   payload is null and this is null too: the registration charges it
 */
public record ClaimedRow(long inboxId, String srvyDrawupNo, String msgType, byte[] payload, int attempt,
                         UUID claimToken, String missingKey) {

    public ClaimedRow(long inboxId, String srvyDrawupNo, String msgType, byte[] payload, int attempt, UUID claimToken) {
        this(inboxId, srvyDrawupNo, msgType, payload, attempt, claimToken, null);
    }
}

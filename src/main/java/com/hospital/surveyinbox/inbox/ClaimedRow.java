package com.hospital.surveyinbox.inbox;

import java.util.UUID;

/**
 * A row this worker owns: the payload came back from the same UPDATE that claimed it, and every
 * outcome write must present {@code claimToken}. On the synchronous path, a message not stored ({@link #NOT_STORED})
 * whose {@code claimToken} is its subject's lease holder (null only for a registration run without a lease, as the
 * route kit's tests run one: no claim to renew).
 *
 * @param missingKey the key the payload was sealed with while the row waits for it (this instance does not have it and
 *                   the row is younger than adapter.crypto.key-wait; payload null), else null — past key-wait the
 *                   payload is null and this is null too: the registration charges it
 */
public record ClaimedRow(long inboxId, String srvyDrawupNo, String msgType, byte[] payload, int attempt,
                         UUID claimToken, String missingKey) {

    /**
     * The id of a message registered on the synchronous path (not stored): above every stored id, so resend detection
     * sees every completed SEND of the inbox. Its claim token is its subject's lease holder.
     */
    public static final long NOT_STORED = Long.MAX_VALUE;

    public ClaimedRow(long inboxId, String srvyDrawupNo, String msgType, byte[] payload, int attempt, UUID claimToken) {
        this(inboxId, srvyDrawupNo, msgType, payload, attempt, claimToken, null);
    }
}

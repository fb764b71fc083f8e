package com.hospital.surveyinbox.inbox;

import java.util.UUID;

/**
 * A row this worker owns: the payload came back from the same UPDATE that claimed it, and every
 * outcome write must present {@code claimToken}.
 */
public record ClaimedRow(long inboxId, String srvyDrawupNo, String msgType, byte[] payload, int attempt,
                         UUID claimToken) {
}

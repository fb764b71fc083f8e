package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStatus;

/**
 * One processing attempt as it moves through {@code routes/inbox-process.camel.yaml}: the claimed row,
 * what the registration flow came to, and what the fenced outcome write recorded.
 *
 * @param recorded the status written, or null when the claim was lost to a newer attempt (nothing written)
 */
public record Attempt(ClaimedRow row, Outcome outcome, InboxStatus recorded, boolean replyOwed) {

    public boolean terminal() {
        return recorded == InboxStatus.COMPLETED || recorded == InboxStatus.DEAD;
    }

    public long inboxId() {
        return row.inboxId();
    }
}

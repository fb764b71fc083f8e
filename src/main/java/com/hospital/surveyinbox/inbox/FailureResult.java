package com.hospital.surveyinbox.inbox;

/** What a fenced failure write did: the new status, or {@code null} when the claim was no longer ours. */
public record FailureResult(InboxStatus status) {

    public boolean applied() {
        return status != null;
    }
}

package com.hospital.surveyinbox;

import java.util.Set;

/** Every route id the routes/ folder must define. */
final class ExpectedRoutes {

    static final Set<String> IDS = Set.of(
            "inbox-receive",
            "inbox-receive-record",
            "inbox-receive-release-lease",
            "inbox-receive-held-row",
            "inbox-publish",
            "inbox-process",
            "inbox-process-row",
            "inbox-process-watch",
            "inbox-register",
            "inbox-register-send",
            "inbox-register-resend",
            "inbox-register-record-for-masking",
            "inbox-consents",
            "inbox-consents-lookup",
            "inbox-reply",
            "inbox-redeliver",
            "inbox-redeliver-counts",
            "inbox-redeliver-chart",
            "inbox-retention",
            "inbox-ops-list",
            "inbox-ops-row",
            "inbox-ops-answer",
            "inbox-requeue",
            "inbox-abandon-reply",
            "inbox-retry-reply",
            "inbox-retry-replies",
            "inbox-reply-action-answer",
            "inbox-requeue-many",
            "inbox-requeue-publish",
            "inbox-ops-changed-row");

    private ExpectedRoutes() {
    }
}

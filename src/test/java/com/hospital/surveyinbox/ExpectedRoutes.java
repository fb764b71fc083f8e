package com.hospital.surveyinbox;

import java.util.Set;

/** Every route id the routes/ folder must define. */
final class ExpectedRoutes {

    static final Set<String> IDS = Set.of(
            "inbox-receive",
            "inbox-publish",
            "inbox-process",
            "inbox-reply",
            "inbox-redeliver",
            "inbox-retention",
            "inbox-register-legacy-consents",
            "inbox-register-legacy-patient",
            "inbox-register-account-guest-find",
            "inbox-register-account-guest-create",
            "inbox-register-survey-bundle",
            "inbox-register-survey-resend",
            "inbox-register-survey-submission");

    private ExpectedRoutes() {
    }
}

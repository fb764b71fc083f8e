package com.hospital.surveyinbox;

import java.util.Set;

/** Every route id the routes/ folder must define. */
final class ExpectedRoutes {

    static final Set<String> IDS = Set.of(
            "inbox-receive",
            "inbox-publish");

    private ExpectedRoutes() {
    }
}

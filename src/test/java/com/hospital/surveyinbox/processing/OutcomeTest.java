package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a failed attempt records: a downstream's code as logs may carry it, our own code for a system error. */
class OutcomeTest {

    /**
     * A downstream that answers a 4xx with the code SYSTEM_ERROR is not one of our system errors: stored as such, a
     * bulk requeue by lastErrorCode SYSTEM_ERROR after an outage (the circuit runbook's) took its rows too.
     */
    @Test
    void aDownstreamsOwnCodeNeverPassesForOurSystemErrorCode() {
        Outcome refused = Outcome.businessFailure("SYSTEM_ERROR", "system error");
        assertThat(refused.failureCode()).isEqualTo(Outcome.NON_STANDARD_CODE);
        assertThat(refused.systemError()).isFalse();
        assertThat(Outcome.businessFailure("FORM_NOT_REGISTERED", "form F1 is not registered").failureCode())
                .isEqualTo("FORM_NOT_REGISTERED");

        Outcome down = Outcome.systemFailure("survey", "inbox-register-survey-bundle", "HTTP 503");
        assertThat(down.failureCode()).isEqualTo(Outcome.SYSTEM_ERROR_CODE);
        assertThat(down.failureReason()).isEqualTo("system error");
        assertThat(down.failureDetail()).isEqualTo("system error at inbox-register-survey-bundle (survey): HTTP 503");
        assertThat(down.systemError()).isTrue();
    }
}

package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import org.junit.jupiter.api.Test;

/**
 * A downstream quotes the patient in its own wording — a two-letter Hangul name, the phone number with
 * separators the message did not have — and nothing of it reaches what operators see: the row, its attempt
 * history (GET /ops/inbox/{id}, which the console shows) and the stored reasons. The corpus of wordings is
 * {@code PatientDataMaskTest}; this is the path end to end.
 */
class PatientDataWordingTest extends IntegrationTest {

    @Test
    void aDownstreamQuotingTheRowsPatientInItsOwnWordingIsMaskedForOperators() {
        String subject = uniqueSubject("WORDING");
        String patno = "PW" + Math.abs(subject.hashCode());
        simulator().failWhen("GET /legacy/patients/" + patno, 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"환자 김구 (010-1234-5678) 없음\"}");
        String id = client.accept(ServiceClient.message(subject, patno, "\"patNm\":\"김구\",\"mobileNo\":\"01012345678\""));

        rows.awaitStatus(id, "FAILED");

        String view = client.ops("/ops/inbox/" + id).body();
        assertThat(view).contains("환자").contains("없음").contains("***")
                .doesNotContain("김구").doesNotContain("010-1234-5678").doesNotContain("1234-5678");
        assertThat(client.ops("/ops/inbox?srvyDrawupNo=" + subject).body()).doesNotContain("김구").doesNotContain("5678");
        String stored = jdbc.queryForObject("SELECT last_error || ' ' || coalesce((SELECT string_agg(reason, ' ') FROM inbox_attempt"
                + " WHERE inbox_id = m.id), '') FROM inbox_message m WHERE id = ?", String.class, Long.parseLong(id));
        assertThat(stored).contains("***").doesNotContain("김구").doesNotContain("5678");
    }

    /**
     * The name a refusal quotes may be known only from the legacy patient record (not from the message): the
     * record read by an earlier step is still there for the masking when a later step fails.
     */
    @Test
    void aRefusalQuotingTheLegacyRecordsNameIsMaskedAfterLaterSteps() {
        String subject = uniqueSubject("WORDING-REC");
        String patno = "PR" + Math.abs(subject.hashCode());
        simulator().failWhen("POST /survey/dispatch-bundles", 422,
                "{\"code\":\"GUEST_BLOCKED\",\"message\":\"guest Patient-" + patno + " is blocked\"}");
        String id = client.accept(ServiceClient.message(subject, patno, "\"patNm\":\"Other Name\""));

        rows.awaitStatus(id, "FAILED");
        assertThat((String) rows.row(id).get("last_error")).startsWith("guest ").endsWith(" is blocked").contains("***")
                .doesNotContain(patno).doesNotContain("Patient");
    }
}

package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The accessors a route builds URLs with: a message value never becomes part of the URL's structure. */
class RegistrationTest {

    static Registration message(String json) throws Exception {
        return new Registration(1, "S1", "SEND", "P1", null, "F100", null, null, null, true, null,
                new ObjectMapper().readTree(json));
    }

    /**
     * Encoded twice (camel-http's toD decodes the path once), so the request carries it encoded exactly once. A dot-
     * segment is refused, not encoded: %2E%2E is still ".." to a server that decodes before it resolves the path.
     */
    @Test
    void aPathSegmentIsEncodedAndNeverADotSegment() throws Exception {
        Registration msg = message("{\"a\":\"x/y?z\",\"b\":\"..\",\"c\":\".\",\"d\":\"a.b\",\"e\":\"...\"}");

        assertThat(msg.segment("a")).isEqualTo("x%252Fy%253Fz");
        assertThat(msg.segment("d")).isEqualTo("a.b");
        assertThat(msg.segment("e")).isEqualTo("...");
        assertThatThrownBy(() -> msg.segment("b")).isInstanceOf(SystemException.class).hasMessageContaining("dot-segment");
        assertThatThrownBy(() -> msg.segment("c")).isInstanceOf(SystemException.class).hasMessageContaining("dot-segment");
        assertThatThrownBy(() -> msg.segment("absent")).isInstanceOf(SystemException.class).hasMessageContaining("absent");
    }

    /** Ids only: Camel quotes a value it cannot convert in its exception's message, which a log line may carry. */
    @Test
    void aRegistrationPrintsItsIdsNotThePatient() throws Exception {
        com.fasterxml.jackson.databind.JsonNode message = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                "{\"srvyDrawupNo\":\"D1\",\"patno\":\"20481234\",\"patNm\":\"김구\",\"mobileNo\":\"01012345678\",\"memo\":\"ward 7\"}");
        Registration registration = new Registration(7, "D1", "SEND", "20481234", "S1", "F100", null, "김구", "01012345678", true,
                null, message);

        assertThat(registration.toString()).contains("inboxId=7", "D1", "SEND")
                .doesNotContain("20481234", "김구", "01012345678", "ward 7");
    }

    /**
     * CONTRACT §3: the bundle carries the account's {@code guestId}. Read as text, a numeric id went out as a string
     * ("12345" for 12345); an answer whose guestId is not an id (an object, a boolean, blank) is the account's fault.
     */
    @Test
    void theBundleCarriesTheGuestIdAsTheAccountWroteIt() throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        RegistrationSteps steps = new RegistrationSteps(com.hospital.surveyinbox.support.TestProperties.bind(java.util.Map.of()), mapper);
        Registration msg = message("{\"srvyDrawupNo\":\"S1\",\"patno\":\"P1\",\"formCd\":\"F100\"}");

        assertThat(mapper.readTree(steps.bundleBody(msg, "{\"guestId\":12345}", null)).get("guestId"))
                .isEqualTo(mapper.getNodeFactory().numberNode(12345));
        assertThat(mapper.readTree(steps.bundleBody(msg, "{\"guestId\":\"G-7\"}", "[]")).get("guestId"))
                .isEqualTo(mapper.getNodeFactory().textNode("G-7"));
        for (String answer : java.util.List.of("{\"guestId\":{}}", "{\"guestId\":true}", "{\"guestId\":\" \"}", "{}")) {
            assertThatThrownBy(() -> steps.bundleBody(msg, answer, null)).as(answer).isInstanceOf(SystemException.class);
        }
    }
}

package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The promise of routes/: the service started on an edited copy of the route files — every recipe of
 * {@code routes/recipes/} applied as YAML by {@link RouteRecipes} (the same files the README lists), no Java
 * changed — behaves as edited:
 * <ol>
 *   <li>the patient lookup moved before the consent lookup: the simulator sees the calls in the new order;</li>
 *   <li>a lookup step added ({@code GET {survey}/forms/{formCd}}): it is called, its 404 {code,message}
 *       fails the row with that message, it is timed under its step id, and a formCd with {@code /} and
 *       {@code ;} stays one path segment;</li>
 *   <li>what a status means changed: a patient 404 now means "use the message's own name and mobile";</li>
 *   <li>a message field the code does not know ({@code wardCd}) reaches the dispatch bundle;</li>
 *   <li>the added lookup's answer reaches the dispatch bundle.</li>
 * </ol>
 * The same messages against the shipped routes behave the other way (ProcessingTest).
 */
@TestPropertySource(properties = {
        "camel.main.routes-include-pattern=file:target/route-edit/*.camel.yaml",
        "adapter.kafka.topic=route-edit-tests",
        "adapter.kafka.group-id=route-edit-tests",
        "spring.quartz.scheduler-name=route-edit-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class RouteEditTest extends IntegrationTest {

    static final Path EDITED = Paths.get("target/route-edit");

    static {
        RouteRecipes.applyAll(Paths.get("routes"), Paths.get("routes/recipes"), EDITED); // before Camel reads the folder
        try { // and an engineer's debugging line, which the start names (the prod profile refuses it)
            java.nio.file.Files.writeString(EDITED.resolve("route-edit-debug.camel.yaml"), String.join("\n",
                    "- route:", "    id: route-edit-debug", "    from:", "      uri: direct:route-edit-debug", "      steps:",
                    "        - log:", "            id: route-edit-debug-log", "            message: \"got ${body}\"", ""));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @org.springframework.beans.factory.annotation.Autowired
    com.hospital.surveyinbox.config.RouteLoggingCheck routeLogging;

    /** An edited route that logs the whole body is named when the service starts (RouteLoggingCheck). */
    @Test
    void aDebuggingLineThatLogsTheBodyIsNamedAtStart() {
        assertThat(routeLogging.found()).singleElement().asString()
                .startsWith("route route-edit-debug, log route-edit-debug-log: its message holds the whole body");
    }

    @Test
    void looksUpThePatientBeforeTheConsentsOnceTheStepsAreSwapped() {
        String subject = uniqueSubject("EDIT-ORDER");
        String srvyNo = "S-" + subject;
        String patno = "P-" + subject;
        String id = client.accept(ServiceClient.message(subject, patno, "\"srvyNo\":\"" + srvyNo + "\""));
        rows.awaitStatus(id, "COMPLETED");

        long patient = seq(patno, "PATIENT");
        long consents = seq(srvyNo, "CONSENTS");
        assertThat(patient).as("patient lookup first").isLessThan(consents);
    }

    @Test
    void anAddedLookupStepIsCalledClassifiedAndTimedWithoutJava() {
        String ok = client.accept(ServiceClient.message(uniqueSubject("EDIT-FORM"), "P-form", "").replace("F100", "F-EDIT-1"));
        String missing = client.accept(ServiceClient.message(uniqueSubject("EDIT-FORM"), "P-form2", "")
                .replace("F100", "NOFORM-EDIT"));

        rows.awaitStatus(ok, "COMPLETED");
        rows.awaitAttempt(missing, 1, "FAILED");
        assertThat(simulator().events("F-EDIT-1")).extracting(DownstreamSimulator.Event::kind).contains("FORM");
        assertThat(rows.row(missing).get("last_error")).isEqualTo("form NOFORM-EDIT does not exist");
        assertThat(client.management("/actuator/prometheus").body()).contains("adapter_downstream_calls_seconds_count{call=\"inbox-register-survey-form\"");
    }

    @Test
    void aPathValueWithSlashAndSemicolonStaysOneSegment() {
        String id = client.accept(ServiceClient.message(uniqueSubject("EDIT-SEG"), "P-seg", "").replace("F100", "F/2;x y"));

        rows.awaitStatus(id, "COMPLETED");
        assertThat(simulator().events("F/2;x y")).extracting(DownstreamSimulator.Event::kind).containsExactly("FORM");
    }

    @Test
    void aMessageFieldTheCodeDoesNotKnowAndTheLookupsAnswerReachTheBundle() {
        String subject = uniqueSubject("EDIT-FIELD");
        String id = client.accept(ServiceClient.message(subject, "P-field", "\"wardCd\":\"W-7\"").replace("F100", "F-EDIT-5"));

        rows.awaitStatus(id, "COMPLETED");
        JsonNode bundle = simulator().bundleRequests(subject).get(0);
        assertThat(bundle.path("wardCd").asText()).isEqualTo("W-7");
        assertThat(bundle.path("form").path("formCd").asText()).isEqualTo("F-EDIT-5");
        assertThat(bundle.path("form").path("active").asBoolean()).isTrue();
    }

    @Test
    void aPatient404NowMeansUseTheMessagesOwnFields() {
        String subject = uniqueSubject("EDIT-404");
        String patno = "NOPAT-" + subject;
        String id = client.accept(ServiceClient.message(subject, patno, "\"patNm\":\"From-Message\""));

        rows.awaitStatus(id, "COMPLETED");
        assertThat(simulator().events(patno + "|From-Message")).extracting(DownstreamSimulator.Event::kind)
                .containsExactly("GUEST_CREATE");
        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);

        // the record check stays: a 200 naming another patient still fails the lookup (a system error), nothing sent
        String other = uniqueSubject("EDIT-OTHER");
        DownstreamSimulator.Fault wrong = simulator().failWhen("GET /legacy/patients/P-" + other, 200,
                "{\"patno\":\"P-SOMEONE-ELSE\",\"patNm\":\"Someone Else\",\"mobileNo\":\"01099998888\"}");
        try {
            String refused = client.accept(ServiceClient.message(other, "P-" + other, ""));
            rows.awaitAttempt(refused, 1, "FAILED");
            assertThat(jdbc.queryForObject("SELECT reason FROM inbox_attempt WHERE inbox_id = ? AND attempt_no = 1", String.class,
                    Long.parseLong(refused))).isEqualTo("system error at inbox-register-legacy-patient (legacy): patient answer names another patient");
            assertThat(simulator().bundleCreates(other)).isZero();
        } finally {
            simulator().remove(wrong);
        }
    }

    private static long seq(String key, String kind) {
        List<DownstreamSimulator.Event> events = simulator().events(key);
        return events.stream().filter(e -> e.kind().equals(kind)).findFirst().orElseThrow(() ->
                new AssertionError("no " + kind + " call for " + key + ": " + events)).seq();
    }
}

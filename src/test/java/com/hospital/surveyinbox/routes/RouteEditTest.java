package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The promise of routes/: the service started on an edited copy of the route files — the three recipes
 * of the README's "Editing routes", applied as text, no Java changed — behaves as edited:
 * <ol>
 *   <li>the patient lookup moved before the consent lookup: the simulator sees the calls in the new order;</li>
 *   <li>a lookup step added ({@code GET {survey}/forms/{formCd}}): it is called, its 404 {code,message}
 *       fails the row with that message, and it is timed under its step id — all without Java;</li>
 *   <li>what a status means changed: a patient 404 now means "use the message's own name and mobile".</li>
 * </ol>
 * The same three messages against the shipped routes behave the other way (ProcessingTest).
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
        copyAndEdit(); // before the Spring context (and so Camel) reads the folder
    }

    /** Recipe 1 of the README: cut the patient step and paste it above the consents step. */
    static String movePatientBeforeConsents(String yaml) {
        String consents = block(yaml, "inbox-register-legacy-consents");
        String patient = block(yaml, "inbox-register-legacy-patient");
        return yaml.replace(consents + patient, patient + consents);
    }

    /** Recipe 2: a new lookup step before the dispatch bundle. */
    static String addFormLookup(String yaml) {
        String bundle = "        - step:\n            id: inbox-register-survey-bundle\n";
        return yaml.replace(bundle, """
                        - step:
                            id: inbox-register-survey-form
                            steps:
                              - setHeader:
                                  name: CamelHttpPath
                                  expression:
                                    simple:
                                      expression: "/forms/${exchangeProperty.msg.formCdSegment}"
                              - to:
                                  id: to-http-survey-form
                                  uri: "{{adapter.survey.base-url}}"
                                  parameters:
                                    httpMethod: GET
                """ + bundle);
    }

    /** Recipe 3: a patient 404 is accepted and means "no legacy record: use the message's own fields". */
    static String patientNotFoundUsesTheMessage(String yaml) {
        String before = """
                              - to:
                                  id: to-http-legacy-patient
                                  uri: "{{adapter.legacy.base-url}}"
                                  parameters:
                                    httpMethod: GET
                              - setProperty:
                                  name: patient
                                  expression:
                                    simple:
                                      expression: "${bodyAs(String)}"
                """;
        String after = """
                              - to:
                                  id: to-http-legacy-patient
                                  uri: "{{adapter.legacy.base-url}}"
                                  parameters:
                                    httpMethod: GET
                                    okStatusCodeRange: "200-299,404"
                              - choice:
                                  when:
                                    - expression:
                                        simple:
                                          expression: "${header.CamelHttpResponseCode} == 404"
                                      steps:
                                        - setProperty:
                                            name: patient
                                            expression:
                                              constant:
                                                expression: "{}"
                                  otherwise:
                                    steps:
                                      - setProperty:
                                          name: patient
                                          expression:
                                            simple:
                                              expression: "${bodyAs(String)}"
                """;
        assertThat(yaml).contains(before);
        return yaml.replace(before, after);
    }

    /** The text of one `- step:` block of the SEND route, up to the next step at the same indent. */
    private static String block(String yaml, String stepId) {
        int start = yaml.indexOf("        - step:\n            id: " + stepId + "\n");
        assertThat(start).as(stepId).isNotNegative();
        int next = yaml.indexOf("\n        - ", start + 1);
        return yaml.substring(start, next + 1);
    }

    private static void copyAndEdit() {
        try {
            Files.createDirectories(EDITED);
            try (Stream<Path> old = Files.list(EDITED)) {
                for (Path p : old.toList()) {
                    Files.delete(p);
                }
            }
            try (Stream<Path> files = Files.list(Paths.get("routes"))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".camel.yaml")).toList()) {
                    String yaml = Files.readString(f, StandardCharsets.UTF_8);
                    if (f.getFileName().toString().equals("inbox-register.camel.yaml")) {
                        yaml = patientNotFoundUsesTheMessage(addFormLookup(movePatientBeforeConsents(yaml)));
                    }
                    Files.writeString(EDITED.resolve(f.getFileName()), yaml, StandardCharsets.UTF_8);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
    void aPatient404NowMeansUseTheMessagesOwnFields() {
        String subject = uniqueSubject("EDIT-404");
        String patno = "NOPAT-" + subject;
        String id = client.accept(ServiceClient.message(subject, patno, "\"patNm\":\"From-Message\""));

        rows.awaitStatus(id, "COMPLETED");
        assertThat(simulator().events(patno + "|From-Message")).extracting(DownstreamSimulator.Event::kind)
                .containsExactly("GUEST_CREATE");
        assertThat(simulator().bundleCreates(subject)).isEqualTo(1);
    }

    private static long seq(String key, String kind) {
        List<DownstreamSimulator.Event> events = simulator().events(key);
        return events.stream().filter(e -> e.kind().equals(kind)).findFirst().orElseThrow(() ->
                new AssertionError("no " + kind + " call for " + key + ": " + events)).seq();
    }
}

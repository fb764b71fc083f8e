package com.hospital.surveyinbox.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Exceptions reach the log as class, SQLState and our own words — never a driver's detail (PostgreSQL's
 * "Failing row contains (…)" holds the row, payload included), a downstream's body, a URL with a patient
 * number in its path, or the token a JSON parser could not read. Each case plants a marker where the data
 * would be and reads the whole captured log of the service for it.
 */
@ExtendWith(OutputCaptureExtension.class)
class NoDataInLogsTest extends IntegrationTest {

    @Test
    void aRowTheDatabaseRefusesLeavesNoneOfItsDataInTheLog(CapturedOutput output) throws Exception {
        String marker = "LOGMARK" + UUID.randomUUID().toString().substring(0, 8);
        String patno = "PATMARK" + UUID.randomUUID().toString().substring(0, 8);
        jdbc.execute("ALTER TABLE inbox_message ADD CONSTRAINT no_data_in_logs_test CHECK (srvy_drawup_no NOT LIKE 'LOGMARK%') NOT VALID");
        try {
            // several at once, so groups of rows are refused together as well as one by one
            ExecutorService senders = Executors.newFixedThreadPool(6);
            List<Future<ServiceClient.Reply>> replies = new java.util.ArrayList<>();
            for (int i = 0; i < 12; i++) {
                String body = ServiceClient.message(marker + "-" + i, patno, "\"patNm\":\"" + patno + "-NAME\"");
                replies.add(senders.submit(() -> client.receive(body)));
            }
            for (Future<ServiceClient.Reply> reply : replies) {
                assertThat(reply.get().status()).isEqualTo(500);
                assertThat(reply.get().body()).doesNotContain(marker).doesNotContain(patno);
            }
            senders.shutdown();
        } finally {
            jdbc.execute("ALTER TABLE inbox_message DROP CONSTRAINT no_data_in_logs_test");
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?", Long.class, marker + "%")).isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> output.getOut().contains("Inbox refused the row"));

        assertNoneIn(output, marker, patno, hex(marker), hex(patno));
        assertThat(output.getOut()).contains("SQLState 23514");
    }

    @Test
    void aDownstreamErrorBodyAndTheUrlOfTheCallStayOutOfTheLog(CapturedOutput output) {
        String bodyMarker = "BODYMARK" + UUID.randomUUID().toString().substring(0, 8);
        String systemPatno = "PSYS" + UUID.randomUUID().toString().substring(0, 8);
        String businessPatno = "PBIZ" + UUID.randomUUID().toString().substring(0, 8);
        simulator().failWhen("GET /legacy/patients/" + systemPatno, 500,
                "<html>Internal error for " + bodyMarker + " at /patients/" + systemPatno + "</html>");
        simulator().failWhen("GET /legacy/patients/" + businessPatno, 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient " + bodyMarker + " (" + businessPatno + ") not found\"}");

        // a business error without a code, and one whose code carries a number: the log names neither's words
        String noCodePatno = "PNOC" + UUID.randomUUID().toString().substring(0, 8);
        String codeMarker = "01012345678";
        simulator().failWhen("GET /legacy/patients/" + noCodePatno, 404, "{\"message\":\"" + bodyMarker + " not found\"}");
        String businessNumberPatno = "PNUM" + UUID.randomUUID().toString().substring(0, 8);
        simulator().failWhen("GET /legacy/patients/" + businessNumberPatno, 404,
                "{\"code\":\"NO_PATIENT_" + codeMarker + "\",\"message\":\"no patient\"}");

        String system = client.accept(ServiceClient.message(uniqueSubject("LOG5XX"), systemPatno, ""));
        String business = client.accept(ServiceClient.message(uniqueSubject("LOG4XX"), businessPatno, ""));
        String noCode = client.accept(ServiceClient.message(uniqueSubject("LOGNOCODE"), noCodePatno, ""));
        String numbered = client.accept(ServiceClient.message(uniqueSubject("LOGNUMCODE"), businessNumberPatno, ""));
        rows.awaitStatus(system, "FAILED");
        rows.awaitStatus(business, "FAILED");
        rows.awaitStatus(noCode, "FAILED");
        rows.awaitStatus(numbered, "FAILED");
        await().atMost(Duration.ofSeconds(10)).until(() -> output.getOut().contains("Inbox " + noCode + " FAILED")
                && output.getOut().contains("Inbox " + numbered + " FAILED"));
        assertThat(output.getAll()).doesNotContain(codeMarker);
        // the lines themselves, whatever the log format (plain here, JSON once a prod-profile start reconfigured logging)
        await().atMost(Duration.ofSeconds(10)).until(() -> output.getOut().contains("Inbox " + system + " FAILED")
                && output.getOut().contains("Inbox " + business + " FAILED") && output.getOut().contains("PATIENT_NOT_FOUND"));

        assertNoneIn(output, bodyMarker, systemPatno, businessPatno);
        assertThat(rows.row(business).get("last_error").toString()).contains(bodyMarker).doesNotContain(businessPatno);
    }

    @Test
    void aBodyThatIsNotJsonIsNotQuotedInTheAnswerOrTheLog(CapturedOutput output) {
        String marker = "JSONMARK" + UUID.randomUUID().toString().substring(0, 8);
        for (String body : List.of("{\"srvyDrawupNo\": " + marker + "}", "{\"srvyDrawupNo\":\"A\",\"patno\":\"" + marker,
                "[\"" + marker + "\"]", marker)) {
            ServiceClient.Reply reply = client.post("/legacy/survey-send-info", body.getBytes(StandardCharsets.UTF_8),
                    "application/json", ServiceClient.LEGACY_AUTH, Map.of());
            assertThat(reply.status()).isEqualTo(400);
            assertThat(reply.body()).doesNotContain(marker);
        }
        assertNoneIn(output, marker);
    }

    /**
     * A query parameter named like Camel's breadcrumb never becomes the exchange's breadcrumb: Camel's HTTP binding
     * copies query parameters into headers (the header of that name was hidden, the parameter was not), and its
     * MDC logging put the caller's text on every line the request logged (the prod profile's JSON lines carry
     * every MDC entry). Read from each logged event's MDC, whatever the console pattern prints.
     */
    @Test
    void aBreadcrumbQueryParameterStaysOutOfTheLogsContext() {
        String marker = "CRUMB" + UUID.randomUUID().toString().substring(0, 8);
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> events = new ch.qos.logback.core.read.ListAppender<>();
        events.start();
        root.addAppender(events);
        jdbc.execute("ALTER TABLE inbox_message ADD CONSTRAINT no_breadcrumb_test CHECK (srvy_drawup_no NOT LIKE 'CRUMB%') NOT VALID");
        try {
            ServiceClient.Reply reply = client.post("/legacy/survey-send-info?breadcrumbId=" + marker + "&BreadcrumbID=" + marker
                            // dotless i (U+0131): lower-cased it stays itself, yet Camel's case-insensitive headers take it for "breadcrumbId"
                            + "&breadcrumb%C4%B1d=" + marker,
                    ServiceClient.message(marker, "").getBytes(StandardCharsets.UTF_8), "application/json",
                    ServiceClient.LEGACY_AUTH, Map.of());
            assertThat(reply.status()).isEqualTo(500);
            await().atMost(Duration.ofSeconds(10)).until(() -> List.copyOf(events.list).stream()
                    .anyMatch(e -> e.getFormattedMessage().startsWith("Inbox refused the row")));
        } finally {
            jdbc.execute("ALTER TABLE inbox_message DROP CONSTRAINT no_breadcrumb_test");
            root.detachAppender(events);
        }
        assertThat(List.copyOf(events.list)).isNotEmpty().allSatisfy(e -> assertThat(e.getMDCPropertyMap().values())
                .as("MDC of \"%s\"", e.getFormattedMessage()).noneMatch(v -> v != null && v.contains(marker)));
    }

    private static void assertNoneIn(CapturedOutput output, String... markers) {
        String all = output.getAll();
        for (String marker : markers) {
            assertThat(all).as("log holds %s", marker).doesNotContain(marker);
        }
    }

    private static String hex(String text) {
        return HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
    }
}

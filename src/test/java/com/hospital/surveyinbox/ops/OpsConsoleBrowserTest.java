package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hospital.surveyinbox.support.Chromium;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.springframework.test.context.TestPropertySource;

/**
 * The operator console in a real browser (Debian's headless Chromium through chromium-driver): it loads
 * without console errors, shows the same counts as {@code /ops/inbox/stats}, requeues a DEAD row (which then
 * completes), shows a 409's reason, never shows patient data, and leaves screenshots under {@code target/}.
 */
@TestPropertySource(properties = OpsConsoleBrowserTest.PROPERTIES)
class OpsConsoleBrowserTest extends IntegrationTest {

    /**
     * Shared with the other console and monitoring tests: one context. No redelivery job here: it sweeps the
     * whole inbox table, and with one attempt allowed it would send other test classes' rows to DEAD.
     */
    static final String PROPERTIES = """
            adapter.kafka.topic=ops-console
            adapter.kafka.group-id=ops-console
            spring.quartz.scheduler-name=ops-console
            adapter.inbox.max-attempts=1
            """;

    private static ChromeDriver browser;

    @BeforeAll
    static void openBrowser() throws Exception {
        browser = Chromium.start();
    }

    @AfterAll
    static void closeBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    /** A row that goes DEAD on its first attempt: the patient lookup answers 404, quoting the patient number. */
    private String deadRow(String marker) {
        return deadRow(marker, uniqueSubject("CONSOLE"));
    }

    private String deadRow(String marker, String subject) {
        String patno = "PMARK" + marker;
        simulator().add(new DownstreamSimulator.Fault(s -> s.equals("GET /legacy/patients/" + patno), 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient " + patno + " not found\"}", 0));
        String id = client.accept(ServiceClient.message(subject, patno, ""));
        rows.awaitStatus(id, "DEAD");
        return id;
    }

    /** {@code n} DEAD rows whose subjects start with {@code prefix} (then 1, 2, …), oldest first. */
    private List<String> deadRows(String prefix, int n) {
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 1; i <= n; i++) {
            ids.add(deadRow(prefix + "m" + i, prefix + i));
        }
        return ids;
    }

    /** Drops the console messages of earlier tests (the browser is shared). */
    private void clearConsole() {
        browser.manage().logs().get(LogType.BROWSER);
    }

    private void open() {
        // the operator's Basic credentials on every request, as a browser sends them once the user has entered
        // them at the prompt (Chrome keeps no cookies for a page opened as http://user:pass@host/)
        browser.executeCdpCommand("Network.enable", Map.of());
        browser.executeCdpCommand("Network.setExtraHTTPHeaders", Map.of("headers",
                Map.of("Authorization", ServiceClient.OPS_AUTH)));
        browser.get("http://localhost:" + port + "/ops/console");
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> "true".equals(browser.findElement(By.tagName("body")).getAttribute("data-loaded")));
    }

    private WebElement rowOnPage(String inboxId) {
        return browser.findElement(By.cssSelector("tr[data-inbox-id='" + inboxId + "']"));
    }

    @Test
    void thePageLoadsWithoutConsoleErrorsAndShowsTheSameCountsAsTheApi() {
        String marker = Long.toString(System.nanoTime());
        String dead = deadRow(marker);
        clearConsole();
        open();
        assertThat(rowOnPage(dead).getText()).contains("DEAD");
        // the counts move while other rows finish: compare one page refresh with the API right after it
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            open();
            JsonNode stats = client.ops("/ops/inbox/stats").json();
            for (String status : List.of("RECEIVED", "PROCESSING", "FAILED", "DEAD", "COMPLETED")) {
                String shown = browser.findElement(By.cssSelector(".count[data-status='" + status + "'] .value")).getText();
                assertThat(shown).as(status).isEqualTo(stats.path("counts").path(status).asText());
            }
        });
        assertThat(browser.findElement(By.id("chart")).getAttribute("data-minutes")).isEqualTo("60");
        List<LogEntry> errors = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.WARNING.intValue()).toList();
        assertThat(errors).as("browser console errors").isEmpty();
    }

    /**
     * The table shows the newest 100 rows of each status; when more match, it says so (it showed 100 and nothing
     * else: an operator read the table as every dead row). 101 DEAD rows of one subject, filtered by it: 100 shown
     * and the note; one fewer, no note.
     */
    @Test
    void aTableCutAtItsLimitSaysSo() {
        String subject = uniqueSubject("CONSOLE-MANY");
        jdbc.update("INSERT INTO inbox_message (srvy_drawup_no, msg_type, status) SELECT ?, 'SEND', 'DEAD'"
                + " FROM generate_series(1, 101)", subject);
        try {
            open();
            browser.findElement(By.id("subject")).sendKeys(subject);
            browser.findElement(By.cssSelector("#filter button[type='submit']")).click();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                assertThat(browser.findElements(By.cssSelector("#rows tbody td.subject"))).hasSize(100)
                        .allSatisfy(cell -> assertThat(cell.getText()).isEqualTo(subject));
                assertThat(browser.findElement(By.id("more")).isDisplayed()).isTrue();
            });
            assertThat(browser.findElement(By.id("more")).getText()).startsWith("More DEAD rows match this subject than the newest 100");

            jdbc.update("DELETE FROM inbox_message WHERE id = (SELECT min(id) FROM inbox_message WHERE srvy_drawup_no = ?)", subject);
            browser.findElement(By.cssSelector("#filter button[type='submit']")).click();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                    .until(() -> !browser.findElement(By.id("more")).isDisplayed());
            assertThat(browser.findElements(By.cssSelector("#rows tbody tr[data-status='DEAD']"))).hasSize(100);
        } finally {
            jdbc.update("DELETE FROM inbox_message WHERE srvy_drawup_no = ?", subject);
        }
    }

    /**
     * A subject holding characters the contract allows but a page would not show as themselves (a right-to-left
     * override turns "1A" into what reads "A1", a zero-width space makes two subjects look alike) is shown with them
     * named: ⟨U+202E⟩, ⟨U+200B⟩.
     */
    @Test
    void aSubjectsInvisibleCharactersAreShownByName() {
        String marker = Long.toString(System.nanoTime());
        String dead = deadRow(marker, "RLO-\u202E1A\u200B-" + marker);
        open();
        assertThat(rowOnPage(dead).findElement(By.cssSelector("td.subject")).getText())
                .isEqualTo("RLO-\u27E8U+202E\u27E91A\u27E8U+200B\u27E9-" + marker);
    }

    @Test
    void aDeadRowRequeuedFromThePageIsReceivedAgainAndCompletes() {
        String marker = Long.toString(System.nanoTime());
        String dead = deadRow(marker);
        simulator().clearFaults(); // the cause is fixed: the patient exists now
        open();
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='requeue']")).click();
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='confirm']")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("message")).isDisplayed());
        assertThat(browser.findElement(By.id("message")).getText()).contains("Inbox " + dead + " requeued (DEAD → RECEIVED)");
        rows.awaitStatus(dead, "COMPLETED");
        assertThat(jdbc.queryForMap("SELECT actor, from_status, to_status FROM operator_audit WHERE inbox_id = ? ORDER BY id LIMIT 1",
                Long.parseLong(dead))).containsEntry("actor", "ops").containsEntry("from_status", "DEAD")
                .containsEntry("to_status", "RECEIVED");
    }

    /** Requeue many from the page: filter, count (a dry run: nothing changes), confirm; and this pod's circuits and workers. */
    @Test
    void deadRowsAFilterMatchesAreCountedThenRequeuedFromThePage() {
        String prefix = "BULKUI-" + System.nanoTime() + "-";
        List<String> dead = deadRows(prefix, 2);
        String first = dead.get(0);
        String second = dead.get(1);
        simulator().clearFaults(); // the cause is fixed
        open();
        assertThat(browser.findElement(By.id("workers")).getText()).matches("\\d+ of \\d+ busy");
        assertThat(browser.findElement(By.id("circuits")).getText()).contains("legacy").contains("account").contains("survey");

        browser.findElement(By.id("bulk-error")).sendKeys("not found");
        browser.findElement(By.id("bulk-code")).sendKeys("PATIENT_NOT_FOUND");
        browser.findElement(By.id("bulk-prefix")).sendKeys(prefix);
        // received within the last hour (the page sends the operator's local times as instants)
        // (to the minute: a datetime-local input's step is 60 s, and a form with seconds in it does not submit)
        java.time.LocalDateTime minute = java.time.LocalDateTime.now().truncatedTo(java.time.temporal.ChronoUnit.MINUTES);
        String hourAgo = minute.minusHours(1).toString();
        String inAnHour = minute.plusHours(1).toString();
        ((org.openqa.selenium.JavascriptExecutor) browser).executeScript(
                "document.getElementById('bulk-from').value = arguments[0]; document.getElementById('bulk-to').value = arguments[1];",
                hourAgo, inAnHour);
        browser.findElement(By.cssSelector("button[data-action='count']")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("bulk-result")).isDisplayed());
        assertThat(browser.findElement(By.id("bulk-result")).getText()).startsWith("2 DEAD rows match");
        assertThat(rows.status(first)).as("counting changes nothing").isEqualTo("DEAD");

        browser.findElement(By.cssSelector("button[data-action='bulk-confirm']")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("bulk-result")).getText().startsWith("Requeued"));
        rows.awaitStatus(first, "COMPLETED");
        rows.awaitStatus(second, "COMPLETED");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM operator_audit WHERE inbox_id IN (?, ?) AND actor = 'ops'",
                Long.class, Long.parseLong(first), Long.parseLong(second))).isEqualTo(2);
    }

    /**
     * The bulk "yes, requeue up to N" takes at most the N counted, once: the call carried no limit (the service's
     * 100) and the button stayed live, so rows that matched since the count — an outage still killing rows — were
     * reset and sent back to a downstream that may still fail, unchecked, by the confirm or its double click.
     */
    @Test
    void aBulkRequeueTakesNoMoreRowsThanTheOperatorConfirmed() {
        String marker = Long.toString(System.nanoTime());
        String prefix = "BULKCAP-" + marker + "-";
        List<String> dead = deadRows(prefix, 2);
        String first = dead.get(0);
        String second = dead.get(1);
        open();
        browser.findElement(By.id("bulk-prefix")).sendKeys(prefix);
        browser.findElement(By.cssSelector("button[data-action='count']")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("bulk-result")).getText().startsWith("2 DEAD rows match"));
        // one more matching row dies while the operator reads the count
        String later = deadRow(marker + "3", prefix + "3");
        simulator().clearFaults(); // the cause is fixed

        new org.openqa.selenium.interactions.Actions(browser)
                .doubleClick(browser.findElement(By.cssSelector("button[data-action='bulk-confirm']"))).perform();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("bulk-result")).getText().startsWith("Requeued 2 rows"));
        rows.awaitStatus(first, "COMPLETED");
        rows.awaitStatus(second, "COMPLETED");
        assertThat(rows.status(later)).as("a row not counted").isEqualTo("DEAD");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM operator_audit WHERE inbox_id = ?", Long.class,
                Long.parseLong(later))).isZero();
    }

    /**
     * The page's refresh (every 10 s) keeps an operator's pending "Requeue? yes/cancel": the table was rebuilt and
     * the question vanished under the operator's pointer.
     */
    @Test
    void aPendingRequeueQuestionOutlivesTheRefresh() {
        String dead = deadRow(Long.toString(System.nanoTime()));
        open();
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='requeue']")).click();
        String updated = browser.findElement(By.id("updated")).getText();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> !browser.findElement(By.id("updated")).getText().equals(updated));
        assertThat(rowOnPage(dead).findElements(By.cssSelector("button[data-action='confirm']"))).hasSize(1);
        // and the page says its rows are held, not that they are fresh
        assertThat(browser.findElement(By.id("updated")).getText()).endsWith("(rows held while a requeue question is open)");
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='cancel']")).click();
        assertThat(rowOnPage(dead).findElements(By.cssSelector("button[data-action='requeue']"))).hasSize(1);
        assertThat(rows.status(dead)).isEqualTo("DEAD");
    }

    @Test
    void aRequeueAnswered409ShowsTheReason() {
        String dead = deadRow(Long.toString(System.nanoTime()));
        simulator().clearFaults();
        open();
        // someone else requeues it meanwhile (curl): the page's row is stale
        assertThat(client.opsPost("/ops/inbox/" + dead + "/requeue").status()).isEqualTo(200);
        rows.awaitStatus(dead, "COMPLETED");
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='requeue']")).click();
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='confirm']")).click();
        await().atMost(Duration.ofSeconds(10)).until(() -> browser.findElement(By.id("message")).isDisplayed());
        assertThat(browser.findElement(By.id("message")).getText())
                .contains("Inbox " + dead + " not requeued (409)")
                .contains("only DEAD or FAILED rows")
                .contains("COMPLETED");
    }

    @Test
    void noPatientDataReachesThePageAndScreenshotsAreSaved() throws Exception {
        String marker = Long.toString(System.nanoTime());
        String dead = deadRow(marker);
        open();
        rowOnPage(dead).findElement(By.cssSelector("button[data-action='history']")).click();
        await().atMost(Duration.ofSeconds(10)).until(() ->
                !browser.findElements(By.cssSelector("tr.detail[data-for='" + dead + "']")).isEmpty());
        String detail = browser.findElement(By.cssSelector("tr.detail[data-for='" + dead + "']")).getText();
        assertThat(detail).contains("DEAD");
        assertThat(browser.getPageSource()).doesNotContain("PMARK" + marker).doesNotContain(marker);
        assertThat(rowOnPage(dead).getText()).contains("patient *** not found");

        Path target = Path.of("target");
        Files.copy(browser.getScreenshotAs(OutputType.FILE).toPath(), target.resolve("ops-console.png"),
                StandardCopyOption.REPLACE_EXISTING);
        // a phone's width: nothing wider than the screen but the rows' own scroller
        browser.manage().window().setSize(new Dimension(390, 844));
        try {
            open();
            Long overflow = (Long) ((JavascriptExecutor) browser).executeScript(
                    "return document.documentElement.scrollWidth - window.innerWidth;");
            assertThat(overflow).as("horizontal overflow at 390 px").isLessThanOrEqualTo(0L);
            Files.copy(browser.getScreenshotAs(OutputType.FILE).toPath(), target.resolve("ops-console-phone.png"),
                    StandardCopyOption.REPLACE_EXISTING);
        } finally {
            browser.manage().window().setSize(new Dimension(1280, 800));
        }
        assertThat(target.resolve("ops-console.png")).isNotEmptyFile();
    }
}

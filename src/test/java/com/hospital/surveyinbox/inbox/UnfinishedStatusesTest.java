package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The unfinished statuses (the ordering guard, the backlog age, the drain check) are defined once, in
 * {@link InboxStatus#UNFINISHED}. SQL cannot import a Java constant, so this checks every statement file and
 * migration: a {@code status IN (…)} list that names RECEIVED together with PROCESSING is the unfinished
 * set, and must be exactly it (a partial index's predicate must also match its queries').
 */
class UnfinishedStatusesTest {

    private static final Pattern STATUS_LIST = Pattern.compile("status\\s+IN\\s*\\(([^)]*)\\)", Pattern.CASE_INSENSITIVE);

    @Test
    void everySqlListOfUnfinishedStatusesIsExactlyTheOneDefinedInJava() throws IOException {
        Set<String> unfinished = InboxStatus.UNFINISHED.stream().map(Enum::name).collect(Collectors.toSet());
        assertThat(InboxStatus.UNFINISHED_SQL).isEqualTo("('RECEIVED', 'PROCESSING', 'FAILED')");
        assertThat(unfinished).containsExactlyInAnyOrder("RECEIVED", "PROCESSING", "FAILED");

        List<String> checked = new ArrayList<>();
        for (Path dir : List.of(Paths.get("src/main/resources/sql"), Paths.get("src/main/resources/db/migration"))) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".sql")).toList()) {
                    String sql = Files.readAllLines(file).stream().filter(l -> !l.strip().startsWith("--"))
                            .collect(Collectors.joining("\n"));
                    Matcher m = STATUS_LIST.matcher(sql);
                    while (m.find()) {
                        Set<String> listed = Arrays.stream(m.group(1).split(","))
                                .map(v -> v.strip().replace("'", "")).collect(Collectors.toSet());
                        // RECEIVED with PROCESSING is the unfinished set (RECEIVED with FAILED alone is "claimable")
                        boolean namesUnfinished = listed.contains("RECEIVED") && listed.contains("PROCESSING")
                                && !listed.contains("COMPLETED");
                        if (namesUnfinished) {
                            assertThat(listed).as(file + ": " + m.group()).isEqualTo(unfinished);
                            checked.add(file.getFileName().toString());
                        }
                    }
                }
            }
        }
        // the ordering guard (claim, hold) and its partial index are among them, and the rollback toggle's claim
        assertThat(checked).contains("claim-row.sql", "record-hold.sql", "V1__inbox.sql", "claim-synchronous-registration.sql");
    }
}

package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every camel-sql step of {@code routes/} declares as many parameters ({@code parametersCount}) as its {@code .sql}
 * file has placeholders ({@code :#name}, each use counted). camel-sql takes the count instead of asking the driver,
 * and a statement edited to use one parameter once more, its step left as it was, failed every time it ran (the
 * outcome of every row, in a test run, before this check): found here when the file is edited, not in production.
 */
class SqlStepsTest {

    private static final Pattern STEP = Pattern.compile("uri: sql:classpath:sql/([a-z0-9-]+\\.sql)");
    private static final Pattern COUNT = Pattern.compile("parametersCount: (\\d+)");
    private static final Pattern PLACEHOLDER = Pattern.compile(":#\\w+");

    @Test
    void everySqlStepDeclaresTheParametersItsFileUses() throws IOException {
        List<String> steps = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("routes"))) {
            for (Path route : files.filter(f -> f.toString().endsWith(".camel.yaml")).sorted().toList()) {
                List<String> lines = Files.readAllLines(route);
                for (int i = 0; i < lines.size(); i++) {
                    Matcher step = STEP.matcher(lines.get(i));
                    if (!step.find()) {
                        continue;
                    }
                    Integer declared = null;
                    for (int j = i + 1; j < Math.min(lines.size(), i + 10) && declared == null; j++) {
                        if (lines.get(j).contains("uri:")) {
                            break;
                        }
                        Matcher count = COUNT.matcher(lines.get(j));
                        if (count.find()) {
                            declared = Integer.parseInt(count.group(1));
                        }
                    }
                    String sql = String.join("\n", Files.readAllLines(Path.of("src/main/resources/sql", step.group(1))).stream()
                            .filter(l -> !l.strip().startsWith("--")).toList());
                    long used = PLACEHOLDER.matcher(sql).results().count();
                    steps.add(route.getFileName() + ":" + (i + 1) + " " + step.group(1));
                    assertThat(declared).as(route.getFileName() + ":" + (i + 1) + " " + step.group(1) + " parametersCount")
                            .isEqualTo((int) used);
                }
            }
        }
        assertThat(steps).as("the routes' camel-sql steps").hasSizeGreaterThan(20);
    }
}

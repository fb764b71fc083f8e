package com.hospital.surveyinbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The README's `mvn spring-boot:test-run` names its main class where the plugin reads it: spring-boot.run.main-class
 * (test-run has no property of its own). The pom set spring-boot.test-run.main-class, which the plugin ignores: the
 * run found LocalRun only while it was the test classes' one main, and refused to start ("Unable to find a single main
 * class") once EndsWithParent and its test added others.
 */
class LocalRunMainClassTest {

    @Test
    void theLocalRunsMainClassIsSetWhereTheSpringBootPluginReadsIt() throws Exception {
        String pom = Files.readString(Path.of("pom.xml"));
        assertThat(pom).contains("<spring-boot.run.main-class>" + LocalRun.class.getName() + "</spring-boot.run.main-class>")
                .doesNotContain("<spring-boot.test-run.main-class>");
        assertThat(LocalRun.class.getMethod("main", String[].class)).isNotNull();
    }
}

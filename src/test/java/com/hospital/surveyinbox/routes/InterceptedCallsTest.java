package com.hospital.surveyinbox.routes;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.camel.CamelContext;
import org.apache.camel.Navigate;
import org.apache.camel.Processor;
import org.apache.camel.Route;
import org.apache.camel.processor.SendProcessor;
import org.apache.camel.spi.InterceptSendToEndpoint;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * Every camel-sql statement and HTTP call written as a static {@code to:} in {@code routes/} goes through the
 * context's interceptors ({@code inbox-downstream}, {@code inbox-statement-tries}) exactly once, whatever order the
 * route files are read in. Camel sets a route configuration's interceptor up when it builds the first route using it,
 * and reads the files in an order keyed by their full paths: read from another folder (a ConfigMap's mount path), the
 * replies' HTTP call and the reception's and replies' statements went without them (config/InterceptorsFirst). Here
 * the routes are read from a copy in a folder of its own (another order at each run). The registration's calls are
 * {@code toD}s (their endpoints made at the first call): HostileAnswersTest and ProcessingTest exercise those.
 */
@TestPropertySource(properties = {
        "adapter.kafka.topic=intercepted-calls-tests",
        "adapter.kafka.group-id=intercepted-calls-tests",
        "spring.quartz.scheduler-name=intercepted-calls-tests"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class InterceptedCallsTest extends IntegrationTest {

    @DynamicPropertySource
    static void routesInAnotherOrder(DynamicPropertyRegistry registry) throws IOException {
        Path shm = Path.of("/dev/shm");
        Path copy = Files.createTempDirectory(Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), "routes-order");
        copy.toFile().deleteOnExit();
        List<Path> files;
        try (var listed = Files.list(Path.of("routes"))) {
            files = listed.filter(f -> f.getFileName().toString().endsWith(".camel.yaml"))
                    .toList();
        }
        for (Path file : files) {
            Path target = copy.resolve(file.getFileName());
            Files.copy(file, target);
            target.toFile().deleteOnExit();
        }
        registry.add("ADAPTER_ROUTES_DIR", copy::toString);
    }

    @Autowired
    CamelContext camel;

    @Test
    void everyStaticStatementAndCallIsInterceptedOnce() {
        List<String> plain = new ArrayList<>();
        List<String> twice = new ArrayList<>();
        int seen = 0;
        for (Route route : camel.getRoutes()) {
            List<Processor> processors = new ArrayList<>();
            walk(route.navigate(), processors);
            for (Processor processor : processors) {
                if (processor instanceof SendProcessor send) {
                    String uri = send.getEndpoint().getEndpointUri();
                    if (uri.startsWith("sql:") || uri.startsWith("http")) {
                        seen++;
                        if (!(send.getEndpoint() instanceof InterceptSendToEndpoint intercepted)) {
                            plain.add(route.getRouteId() + " " + uri);
                        } else if (intercepted.getOriginalEndpoint() instanceof InterceptSendToEndpoint) {
                            twice.add(route.getRouteId() + " " + uri);
                        }
                    }
                }
            }
        }
        assertThat(camel.getRoute("inbox-reply").getSourceLocation()).as("read from the copy").contains("routes-order");
        assertThat(seen).as("static statements and calls found").isGreaterThan(20);
        assertThat(plain).as("without the interceptors").isEmpty();
        assertThat(twice).as("intercepted twice").isEmpty();
    }

    @SuppressWarnings("unchecked")
    private static void walk(Navigate<Processor> navigate, List<Processor> out) {
        if (navigate == null || !navigate.hasNext()) {
            return;
        }
        for (Processor processor : navigate.next()) {
            out.add(processor);
            if (processor instanceof Navigate<?> nested) {
                walk((Navigate<Processor>) nested, out);
            }
        }
    }
}

package com.hospital.surveyinbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.camel.CamelContext;
import org.apache.camel.Route;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Guards against a YAML edit that silently drops or renames a route: the exact set loaded from routes/ (and the one Java route). */
class RoutesLoadTest extends IntegrationTest {

    @Autowired
    CamelContext camel;

    /** The one route not from routes/: it sets up the context's interceptors first (config/InterceptorsFirst). */
    static final String JAVA_ROUTE = "inbox-interceptors-first";

    @Test
    void loadsExactlyTheRoutesOfTheRoutesFolder() {
        Set<String> ids = camel.getRoutes().stream().map(Route::getRouteId).collect(Collectors.toSet());
        assertThat(ids).contains(JAVA_ROUTE);
        ids.remove(JAVA_ROUTE);
        assertThat(ids).containsExactlyInAnyOrderElementsOf(ExpectedRoutes.IDS);
        assertThat(camel.getRoutes()).filteredOn(route -> !route.getRouteId().equals(JAVA_ROUTE)).allSatisfy(route ->
                assertThat(route.getSourceLocation()).as(route.getRouteId()).matches("file:routes/[a-z-]+\\.camel\\.yaml:\\d+"));
    }
}

package com.hospital.surveyinbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.camel.CamelContext;
import org.apache.camel.Route;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Guards against a YAML edit that silently drops or renames a route: the exact set loaded from routes/. */
class RoutesLoadTest extends IntegrationTest {

    @Autowired
    CamelContext camel;

    @Test
    void loadsExactlyTheRoutesOfTheRoutesFolder() {
        Set<String> ids = camel.getRoutes().stream().map(Route::getRouteId).collect(Collectors.toSet());
        assertThat(ids).containsExactlyInAnyOrderElementsOf(ExpectedRoutes.IDS);
        assertThat(camel.getRoutes()).allSatisfy(route ->
                assertThat(route.getSourceLocation()).as(route.getRouteId()).matches("file:routes/[a-z-]+\\.camel\\.yaml:\\d+"));
    }
}

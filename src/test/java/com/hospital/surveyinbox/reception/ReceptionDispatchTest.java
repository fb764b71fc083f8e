package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.test.util.ReflectionTestUtils;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.HandlerExecutionChain;

/**
 * The dispatcher hands a reception to the platform-http route directly ({@code ReceptionHttpEngine}), not
 * through Spring MVC's annotated-controller adapter, and the reception is still answered in full.
 */
class ReceptionDispatchTest extends IntegrationTest {

    @Autowired
    DispatcherServlet dispatcher;

    /** platform-http's request mapping, behind the controllers (ReceptionHttpEngine.AfterControllers). */
    @Autowired
    @org.springframework.beans.factory.annotation.Qualifier("platformHttpEngineRequestMapping")
    org.springframework.web.servlet.HandlerMapping camelMapping;

    @Test
    void aReceptionIsDispatchedToTheRouteByThePlatformHttpAdapter() throws Exception {
        // a served reception: the dispatcher has initialised its adapters, and the answer is the contract's
        ServiceClient.Reply reply = client.receive(ServiceClient.message(uniqueSubject("DISPATCH"), ""));
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.header("X-Result-Code")).isEqualTo("Y");
        assertThat(reply.header("Content-Length")).isNotNull();

        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/legacy/survey-send-info");
        request.setContentType("application/json");
        HandlerExecutionChain chain = camelMapping.getHandler(request);
        assertThat(chain).isNotNull();
        @SuppressWarnings("unchecked")
        List<HandlerAdapter> adapters = (List<HandlerAdapter>) ReflectionTestUtils.getField(dispatcher, "handlerAdapters");
        HandlerAdapter chosen = adapters.stream().filter(a -> a.supports(chain.getHandler())).findFirst().orElseThrow();
        assertThat(chosen).isInstanceOf(ReceptionHttpEngine.PlatformHttpHandlerAdapter.class);
    }
}
